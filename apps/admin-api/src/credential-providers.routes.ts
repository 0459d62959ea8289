import { secretBoxFor, jwtAuth, requirePermission } from '@agentgw/auth';
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
import {
  credentialConfigSchemas,
  createCredentialProvider,
  credentialProviderForService,
  deleteCredentialProvider,
  getCredentialProvider,
  listCredentialProviders,
  updateCredentialProvider,
  type CredentialProvider,
  type CredentialProvidersContext,
} from './credential-providers.js';
import { adminActionLog, changedFields } from './admin-action-log.js';
import { TenantIdSchema } from './users.routes.js';

const AuthTypeSchema = z.enum(['oauth2', 'api_key', 'jwt', 'basic']).openapi('CredentialAuthType');
const ServiceTypeSchema = z
  .string()
  .max(100)
  .regex(/^[a-z][a-z0-9_]*$/, 'must match ^[a-z][a-z0-9_]*$')
  .openapi({ example: 'github' });

const CredentialProviderSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    serviceType: z.string(),
    authType: AuthTypeSchema,
    description: z.string().nullable(),
    config: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'Secret fields (clientSecret, any *secret*/*password* key) read as ********' }),
    tenantId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('CredentialProvider');

const base = {
  name: z.string().trim().min(1).max(200),
  serviceType: ServiceTypeSchema,
  description: z.string().max(2000).nullable().optional(),
  tenantId: TenantIdSchema.nullable()
    .optional()
    .openapi({ description: 'Admin only; others are pinned to their own tenant' }),
};

const CreateCredentialProviderBody = z
  .discriminatedUnion('authType', [
    z.object({ ...base, authType: z.literal('oauth2'), config: credentialConfigSchemas.oauth2 }),
    z.object({ ...base, authType: z.literal('jwt'), config: credentialConfigSchemas.jwt.optional() }),
    z.object({ ...base, authType: z.literal('api_key'), config: credentialConfigSchemas.api_key.optional() }),
    z.object({ ...base, authType: z.literal('basic'), config: credentialConfigSchemas.basic.optional() }),
  ])
  .openapi('CreateCredentialProviderRequest');

const UpdateCredentialProviderBody = z
  .object({
    name: base.name.optional(),
    serviceType: ServiceTypeSchema.optional(),
    authType: AuthTypeSchema.optional(),
    description: base.description,
    config: z.record(z.string(), z.unknown()).optional().openapi({
      description:
        'Replaces the config, validated against the (new or current) authType; a secret sent as ******** keeps the stored one',
    }),
  })
  .openapi('UpdateCredentialProviderRequest');

const ServiceTypeParams = z.object({
  serviceType: z
    .string()
    .min(1)
    .openapi({ param: { name: 'serviceType', in: 'path' } }),
});

const ProviderBody = z.object({ provider: CredentialProviderSchema });
const ProviderWritten = z.object({ success: z.literal(true), provider: CredentialProviderSchema });
const common = { tags: ['Credential providers'], security: jwtSecurity };

const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/',
  summary: 'List credential providers',
  middleware: requirePermission('provider:read'),
  responses: {
    200: jsonResponse(z.object({ providers: z.array(CredentialProviderSchema) }), 'Credential providers'),
    ...errorResponses(401, 403),
  },
});
const createProviderRoute = createRoute({
  ...common,
  method: 'post',
  path: '/',
  summary: 'Create a credential provider',
  description:
    'One provider per serviceType in each tenant (global providers form their own scope): a duplicate is 409.',
  middleware: requirePermission('provider:create'),
  request: { body: jsonBody(CreateCredentialProviderBody) },
  responses: { 201: jsonResponse(ProviderWritten, 'Created'), ...errorResponses(400, 401, 403, 409) },
});
const byServiceRoute = createRoute({
  ...common,
  method: 'get',
  path: '/by-service/{serviceType}',
  summary: 'Resolve the credential provider of a service type',
  description: "The caller's tenant's provider if there is one, else the global one; 404 when neither exists.",
  middleware: requirePermission('provider:read'),
  request: { params: ServiceTypeParams },
  responses: { 200: jsonResponse(ProviderBody, 'Credential provider'), ...errorResponses(401, 403, 404) },
});
const getRoute = createRoute({
  ...common,
  method: 'get',
  path: '/{id}',
  summary: 'Get a credential provider',
  middleware: requirePermission('provider:read'),
  request: { params: IdParams },
  responses: { 200: jsonResponse(ProviderBody, 'Credential provider'), ...errorResponses(401, 403, 404) },
});
const updateRoute = createRoute({
  ...common,
  method: 'put',
  path: '/{id}',
  summary: 'Update a credential provider',
  description: 'Partial: absent fields keep their value. Masked secrets (********) keep the stored values.',
  middleware: requirePermission('provider:update'),
  request: { params: IdParams, body: jsonBody(UpdateCredentialProviderBody) },
  responses: { 200: jsonResponse(ProviderWritten, 'Updated'), ...errorResponses(400, 401, 403, 404, 409) },
});
const deleteRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/{id}',
  summary: 'Delete a credential provider',
  middleware: requirePermission('provider:delete'),
  request: { params: IdParams },
  responses: { 200: jsonResponse(SuccessBody, 'Deleted'), ...errorResponses(401, 403, 404) },
});

export function credentialProvidersRoutes(deps: ServiceDeps): OpenAPIHono {
  const ctx: CredentialProvidersContext = { ...deps, secrets: secretBoxFor(deps.config) };
  const logAction = adminActionLog(deps);
  const providerSubject = (provider: CredentialProvider, details: Record<string, unknown> = {}) => ({
    providerId: null,
    tenantId: provider.tenantId,
    details: { credentialProviderId: provider.id, serviceType: provider.serviceType, ...details },
  });
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth));
  app.openapi(listRoute, async (c) =>
    c.json({ providers: await listCredentialProviders(deps.db, c.var.principal) }, 200),
  );
  app.openapi(createProviderRoute, async (c) => {
    const provider = await createCredentialProvider(ctx, c.var.principal, c.req.valid('json'));
    await logAction(c.var.principal, 'credential_provider_created', providerSubject(provider));
    return c.json({ success: true as const, provider }, 201);
  });
  app.openapi(byServiceRoute, async (c) => {
    const provider = await credentialProviderForService(deps.db, c.var.principal, c.req.valid('param').serviceType);
    return c.json({ provider }, 200);
  });
  app.openapi(getRoute, async (c) =>
    c.json({ provider: await getCredentialProvider(deps.db, c.var.principal, c.req.valid('param').id) }, 200),
  );
  app.openapi(updateRoute, async (c) => {
    const patch = c.req.valid('json');
    const provider = await updateCredentialProvider(ctx, c.var.principal, c.req.valid('param').id, patch);
    await logAction(
      c.var.principal,
      'credential_provider_updated',
      providerSubject(provider, { fields: changedFields(patch) }),
    );
    return c.json({ success: true as const, provider }, 200);
  });
  app.openapi(deleteRoute, async (c) => {
    const provider = await getCredentialProvider(deps.db, c.var.principal, c.req.valid('param').id);
    await deleteCredentialProvider(ctx, c.var.principal, provider.id);
    await logAction(c.var.principal, 'credential_provider_deleted', providerSubject(provider));
    return c.json({ success: true as const }, 200);
  });
  return app;
}
