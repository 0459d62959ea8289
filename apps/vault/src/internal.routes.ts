import { SERVICE_TOKEN_HEADER, VAULT_AUDIENCE, type Vault } from '@agentgw/credentials';
import { parseJson, UnauthorizedError } from '@agentgw/core';
import {
  documentedJsonBody,
  errorResponses,
  jsonResponse,
  openApiApp,
  serviceSecurity,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { createMiddleware } from 'hono/factory';
import { serviceTypesSchema } from './credentials.openapi.js';

const tenantIdSchema = z.string().min(1).max(256).nullable();

/** Where the values go: the vault releases to it only what it may receive ("Recipients" in `packages/credentials/README.md`). */
const recipientSchema = z.object({
  kind: z.enum(['tool_provider', 'agent']),
  tenantId: tenantIdSchema,
  endpoint: z.string().url().max(2048),
});

const internalResolveBody = z.object({
  userId: z.string().min(1).max(256),
  tenantId: tenantIdSchema.default(null),
  serviceTypes: serviceTypesSchema,
  recipient: recipientSchema,
});

/** Only other gateway services (service tokens for audience `vault`); user, API key and runtime credentials are refused. */
const serviceAuth = (deps: ServiceDeps) =>
  createMiddleware(async (c, next) => {
    const token = c.req.header(SERVICE_TOKEN_HEADER);
    if (!token) throw new UnauthorizedError(`${SERVICE_TOKEN_HEADER} required`);
    await deps.auth.verifyServiceToken(token, VAULT_AUDIENCE);
    await next();
  });

const internalResolveRoute = createRoute({
  method: 'post',
  path: '/credentials/resolve',
  tags: ['Internal'],
  summary: "A user's credential values for invoke-proxy (service token of audience `vault` only)",
  security: serviceSecurity,
  request: { body: documentedJsonBody(internalResolveBody) },
  responses: {
    200: jsonResponse(
      z.object({
        credentials: z.record(z.string(), z.string()),
        missing: z.array(z.string()),
        authUrls: z.record(z.string(), z.string()),
      }),
      'Resolved',
    ),
    ...errorResponses(400, 401),
  },
});

/**
 * `/internal/v1/*`: service-to-service API (invoke-proxy → vault in distributed mode). Keep it
 * off the public path router; the service token is the second line of defence.
 */
export function internalRoutes(deps: ServiceDeps, vault: Vault): OpenAPIHono {
  const app = openApiApp();
  app.use('*', serviceAuth(deps));
  app.openapi(internalResolveRoute, async (c) => {
    const input = await parseJson(c, internalResolveBody);
    return c.json(await vault.resolve(input), 200);
  });
  return app;
}
