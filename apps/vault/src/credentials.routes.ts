import { flexibleAuth, hasActingUser, requireApiKeyScope, type Principal } from '@agentgw/auth';
import type { Vault } from '@agentgw/credentials';
import { ForbiddenError, NotImplementedError, parseJson, ValidationError } from '@agentgw/core';
import { documentedJsonBody, errorResponses, flexibleSecurity, IdParams, jsonResponse, openApiApp, SuccessBody, type ServiceDeps } from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';

export const SERVICE_TYPE_PATTERN = /^[a-z][a-z0-9_]*$/;
export const serviceTypeSchema = z.string().max(64).regex(SERVICE_TYPE_PATTERN, 'must match ^[a-z][a-z0-9_]*$');
export const serviceTypesSchema = z.array(serviceTypeSchema).max(100);

const jwtBody = z.object({
  serviceType: serviceTypeSchema,
  token: z.string().min(1).max(16_384),
  expiresAt: z.iso.datetime({ offset: true }),
});
const apiKeyBody = z.object({
  serviceType: serviceTypeSchema,
  apiKey: z.string().min(1).max(16_384),
});
const resolveBody = z.object({ serviceTypes: serviceTypesSchema });

const CredentialMetadata = z
  .object({
    id: z.string(),
    serviceType: z.string(),
    kind: z.enum(['jwt', 'api_key', 'oauth2', 'basic']),
    expiresAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('CredentialMetadata');
const Resolution = z.object({ credentials: z.record(z.string(), z.string()), missing: z.array(z.string()), authUrls: z.record(z.string(), z.string()) }).openapi('CredentialResolution');
const CheckResult = z
  .union([z.object({ hasCredential: z.literal(true), credential: CredentialMetadata }), z.object({ hasCredential: z.literal(false), authUrl: z.string() })])
  .openapi('CredentialCheck');
/** Any string: the handler checks it after the caller (see `pathServiceType`), so refusals keep their order. */
const ServiceTypeParams = z.object({ serviceType: z.string().openapi({ param: { name: 'serviceType', in: 'path' }, example: 'github' }) });

/** The user the request acts for; a bare runtime token speaks for an agent, not a user. */
function actingUser(c: Context): { userId: string; tenantId: string | null } {
  const principal: Principal = c.get('principal');
  if (!hasActingUser(principal)) {
    throw new ForbiddenError('Credentials belong to a user: send a user JWT or an API key with X-User-Id', 'USER_REQUIRED');
  }
  return { userId: principal.userId, tenantId: principal.tenantId };
}

function pathServiceType(c: Context): string {
  const parsed = serviceTypeSchema.safeParse(c.req.param('serviceType'));
  if (!parsed.success) throw new ValidationError('serviceType: must match ^[a-z][a-z0-9_]*$', { field: 'serviceType' });
  return parsed.data;
}

const base = { tags: ['Credentials'], security: flexibleSecurity };
const oauthNotImplemented = { 501: errorResponses(501)[501] };

const listRoute = createRoute({
  ...base,
  method: 'get',
  path: '/',
  summary: "The caller's stored credentials (metadata only, never the secret)",
  middleware: [requireApiKeyScope('credentials:read')] as const,
  responses: { 200: jsonResponse(z.object({ credentials: z.array(CredentialMetadata) }), 'Credentials'), ...errorResponses(401, 403) },
});
const storeJwtRoute = createRoute({
  ...base,
  method: 'post',
  path: '/jwt',
  summary: 'Store (or replace) a JWT for a service type',
  middleware: [requireApiKeyScope('credentials:write')] as const,
  request: { body: documentedJsonBody(jwtBody) },
  responses: {
    201: jsonResponse(z.object({ success: z.literal(true), credential: CredentialMetadata }), 'Stored'),
    ...errorResponses(400, 401, 403),
  },
});
const storeApiKeyRoute = createRoute({
  ...base,
  method: 'post',
  path: '/apikey',
  summary: 'Store (or replace) an API key for a service type',
  middleware: [requireApiKeyScope('credentials:write')] as const,
  request: { body: documentedJsonBody(apiKeyBody) },
  responses: {
    201: jsonResponse(z.object({ success: z.literal(true), credential: CredentialMetadata }), 'Stored'),
    ...errorResponses(400, 401, 403),
  },
});
const resolveRoute = createRoute({
  ...base,
  method: 'post',
  path: '/resolve',
  summary: "The caller's credential values for the given service types, what is missing, and where to connect it",
  middleware: [requireApiKeyScope('credentials:resolve')] as const,
  request: { body: documentedJsonBody(resolveBody) },
  responses: { 200: jsonResponse(Resolution, 'Resolved'), ...errorResponses(400, 401, 403) },
});
const checkRoute = createRoute({
  ...base,
  method: 'get',
  path: '/check/{serviceType}',
  summary: 'Whether the caller has a usable credential for a service type',
  middleware: [requireApiKeyScope('credentials:resolve')] as const,
  request: { params: ServiceTypeParams },
  responses: { 200: jsonResponse(CheckResult, 'Check result'), ...errorResponses(400, 401, 403) },
});
const oauthAuthRoute = createRoute({
  ...base,
  method: 'get',
  path: '/oauth/{serviceType}/auth',
  summary: 'Start an OAuth connection (not implemented yet: 501)',
  request: { params: ServiceTypeParams },
  responses: { ...oauthNotImplemented, ...errorResponses(401, 403) },
});
const oauthCallbackRoute = createRoute({
  ...base,
  method: 'get',
  path: '/oauth/{serviceType}/callback',
  summary: 'OAuth callback (not implemented yet: 501)',
  request: { params: ServiceTypeParams },
  responses: { ...oauthNotImplemented, ...errorResponses(401, 403) },
});
const deleteRoute = createRoute({
  ...base,
  method: 'delete',
  path: '/{id}',
  summary: "Delete one of the caller's credentials",
  middleware: [requireApiKeyScope('credentials:write')] as const,
  request: { params: IdParams },
  responses: { 200: jsonResponse(SuccessBody, 'Deleted'), ...errorResponses(401, 403, 404) },
});

const notImplemented = (): never => {
  throw new NotImplementedError('OAuth credential connection is not implemented yet; store a JWT or API key instead');
};

/**
 * `/api/v1/credentials/*`: the caller's own vault entries (flexible auth; API keys need the
 * matching scope). Session tokens are refused: the agent's upstream holds one, and it must not
 * read or change the end user's credentials. Bodies are parsed in the handlers, after the
 * caller is known to act for a user.
 */
export function credentialsRoutes(deps: ServiceDeps, vault: Vault): OpenAPIHono {
  const app = openApiApp();
  app.use('*', flexibleAuth(deps.auth));

  app.openapi(listRoute, async (c) => {
    const { userId } = actingUser(c);
    return c.json({ credentials: await vault.list(userId) }, 200);
  });

  app.openapi(storeJwtRoute, async (c) => {
    const { userId, tenantId } = actingUser(c);
    const body = await parseJson(c, jwtBody);
    const credential = await vault.store({
      userId,
      tenantId,
      serviceType: body.serviceType,
      kind: 'jwt',
      secret: body.token,
      expiresAt: new Date(body.expiresAt),
    });
    return c.json({ success: true as const, credential }, 201);
  });

  app.openapi(storeApiKeyRoute, async (c) => {
    const { userId, tenantId } = actingUser(c);
    const body = await parseJson(c, apiKeyBody);
    const credential = await vault.store({
      userId,
      tenantId,
      serviceType: body.serviceType,
      kind: 'api_key',
      secret: body.apiKey,
      expiresAt: null,
    });
    return c.json({ success: true as const, credential }, 201);
  });

  app.openapi(resolveRoute, async (c) => {
    const { userId, tenantId } = actingUser(c);
    const { serviceTypes } = await parseJson(c, resolveBody);
    return c.json(await vault.resolve({ userId, tenantId, serviceTypes }), 200);
  });

  app.openapi(checkRoute, async (c) => {
    const { userId, tenantId } = actingUser(c);
    return c.json(await vault.check({ userId, tenantId, serviceType: pathServiceType(c) }), 200);
  });

  app.openapi(oauthAuthRoute, notImplemented);
  app.openapi(oauthCallbackRoute, notImplemented);

  app.openapi(deleteRoute, async (c) => {
    const { userId } = actingUser(c);
    await vault.remove(userId, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });

  return app;
}
