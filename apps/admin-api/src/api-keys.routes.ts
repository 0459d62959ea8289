import { jwtAuth, requirePermission } from '@agentgw/auth';
import {
  IdParams,
  SuccessBody,
  errorResponses,
  jsonBody,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys.js';
import { adminActionLog } from './admin-action-log.js';
import { TenantIdSchema } from './users.routes.js';

const Scope = z.enum(['credentials:resolve', 'credentials:read', 'credentials:write']).openapi('ApiKeyScope');

const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(Scope),
    keyPrefix: z.string(),
    tenantId: z.string().nullable(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
  })
  .openapi('ApiKey');

const CreateApiKeyBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    scopes: z.array(Scope).min(1).optional().openapi({ description: 'Defaults to [credentials:resolve]' }),
    tenantId: TenantIdSchema.nullable()
      .optional()
      .openapi({ description: 'Admin only; others are pinned to their own tenant' }),
  })
  .openapi('CreateApiKeyRequest');

const common = { tags: ['API keys'], security: jwtSecurity };

const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/',
  summary: 'List active API keys (prefix only)',
  responses: {
    200: jsonResponse(z.object({ apiKeys: z.array(ApiKeySchema) }), 'API keys'),
    ...errorResponses(401, 403),
  },
});
const createKeyRoute = createRoute({
  ...common,
  method: 'post',
  path: '/',
  summary: 'Create an API key; the full key is returned once',
  request: { body: jsonBody(CreateApiKeyBody) },
  responses: {
    201: jsonResponse(
      z.object({
        success: z.literal(true),
        apiKey: ApiKeySchema,
        key: z.string().openapi({ description: '`gk_…`, shown only here' }),
      }),
      'Created',
    ),
    ...errorResponses(400, 401, 403),
  },
});
const revokeRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/{id}',
  summary: 'Revoke an API key',
  request: { params: IdParams },
  responses: { 200: jsonResponse(SuccessBody, 'Revoked'), ...errorResponses(401, 403, 404) },
});

export function apiKeysRoutes(deps: ServiceDeps): OpenAPIHono {
  const logAction = adminActionLog(deps);
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth), requirePermission('apikey:manage'));
  app.openapi(listRoute, async (c) => c.json({ apiKeys: await listApiKeys(deps.db, c.var.principal) }, 200));
  app.openapi(createKeyRoute, async (c) => {
    const { apiKey, key } = await createApiKey(deps, c.var.principal, c.req.valid('json'));
    await logAction(c.var.principal, 'api_key_created', {
      providerId: null,
      tenantId: apiKey.tenantId,
      details: { apiKeyId: apiKey.id, name: apiKey.name, scopes: apiKey.scopes },
    });
    return c.json({ success: true as const, apiKey, key }, 201);
  });
  app.openapi(revokeRoute, async (c) => {
    const { id } = c.req.valid('param');
    await revokeApiKey(deps, c.var.principal, id);
    await logAction(c.var.principal, 'api_key_revoked', {
      providerId: null,
      tenantId: c.var.principal.tenantId,
      details: { apiKeyId: id },
    });
    return c.json({ success: true as const }, 200);
  });
  return app;
}
