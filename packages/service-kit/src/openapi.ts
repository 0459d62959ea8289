import type { OpenAPIHono } from '@hono/zod-openapi';
import { mountDocsPage } from './docs-page.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/api/v1/docs';

/**
 * Serves the OpenAPI 3.1 document generated from every route declared with the route kit on
 * `app` (the host's app, so it covers every service the host runs), and the interactive
 * reference (Swagger UI, served by the gateway itself: docs-page.ts). Call after all services are mounted.
 */
export function mountOpenApi(app: OpenAPIHono, options: { title: string; description: string }): void {
  // Names match the `security` requirements in route-kit.ts.
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'User JWT from POST /api/v1/auth/login (or an agent runtime token where a route says so)',
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
  app.openAPIRegistry.registerComponent('securitySchemes', 'serviceToken', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Token',
    description: 'Service-to-service JWT (internal APIs only; never exposed by the path router)',
  });
  app.doc31(OPENAPI_PATH, {
    openapi: '3.1.0',
    info: { title: options.title, version: '1.0.0', description: options.description },
  });
  mountDocsPage(app, DOCS_PATH, options.title);
}
