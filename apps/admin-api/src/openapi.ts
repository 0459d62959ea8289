import type { OpenAPIHono } from '@hono/zod-openapi';
import { Scalar } from '@scalar/hono-api-reference';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/api/v1/docs';

/**
 * Serves the OpenAPI 3.1 document generated from every mounted route's zod schemas, and the
 * interactive reference (Scalar). Mount after all routers, on the app that holds them.
 */
export function mountOpenApi(app: OpenAPIHono): void {
  // Names match the `security` requirements in route-kit.ts.
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'User JWT from POST /api/v1/auth/login',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'API key (gk_…), sent with the acting user in X-User-Id',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'userId', {
    type: 'apiKey',
    in: 'header',
    name: 'X-User-Id',
    description: 'The acting user, beside an API key',
  });
  app.doc31(OPENAPI_PATH, {
    openapi: '3.1.0',
    info: {
      title: 'Agent Gateway admin API',
      version: '1.0.0',
      description: 'Accounts, users, agents, API keys, tool providers, provider access, credential providers and devices.',
    },
  });
  // The page loads Scalar's script from its CDN when opened; the JSON above needs nothing external.
  // Relative URL, so the page also works behind a path prefix.
  app.get(DOCS_PATH, Scalar({ url: 'openapi.json', pageTitle: 'Agent Gateway admin API' }));
}
