import { flexibleAuth, hasActingUser, requireApiKeyScope, requirePermission, type Principal } from '@agentgw/auth';
import type { OAuthConnect, Vault } from '@agentgw/credentials';
import { CREDENTIAL_STATUSES, ForbiddenError, parseJson, ValidationError } from '@agentgw/core';
import {
  documentedJsonBody,
  errorResponses,
  flexibleSecurity,
  IdParams,
  jsonResponse,
  openApiApp,
  SuccessBody,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';

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
    status: z.enum(CREDENTIAL_STATUSES).openapi({
      description:
        'needs_reconnect: the server refused the refresh; expired: past expiresAt with nothing to refresh it',
    }),
    expiresAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('CredentialMetadata');
const Resolution = z
  .object({
    credentials: z.record(z.string(), z.string()),
    missing: z.array(z.string()),
    authUrls: z.record(z.string(), z.string()),
  })
  .openapi('CredentialResolution');
const CheckResult = z
  .union([
    z.object({ hasCredential: z.literal(true), credential: CredentialMetadata }),
    z.object({ hasCredential: z.literal(false), authUrl: z.string() }),
  ])
  .openapi('CredentialCheck');
/** Any string: the handler checks it after the caller (see `pathServiceType`), so refusals keep their order. */
const ServiceTypeParams = z.object({
  serviceType: z.string().openapi({ param: { name: 'serviceType', in: 'path' }, example: 'github' }),
});

/** The user the request acts for; a bare runtime token speaks for an agent, not a user. */
function actingUser(c: Context): { userId: string; tenantId: string | null } {
  const principal: Principal = c.get('principal');
  if (!hasActingUser(principal)) {
    throw new ForbiddenError(
      'Credentials belong to a user: send a user JWT or an API key with X-User-Id',
      'USER_REQUIRED',
    );
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
const redirect = (what: string) => ({ description: what, headers: z.object({ location: z.string() }) });

const listRoute = createRoute({
  ...base,
  method: 'get',
  path: '/',
  summary: "The caller's stored credentials (metadata only, never the secret)",
  middleware: [requireApiKeyScope('credentials:read')] as const,
  responses: {
    200: jsonResponse(z.object({ credentials: z.array(CredentialMetadata) }), 'Credentials'),
    ...errorResponses(401, 403),
  },
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
  summary:
    "Start connecting the caller's account at the service (authorization code + PKCE); 501 when its provider names no authorization server",
  description:
    'Answers `{ authUrl }`, or redirects there (302) when the request accepts text/html (a browser following a link).',
  middleware: [requireApiKeyScope('credentials:write')] as const,
  request: { params: ServiceTypeParams },
  responses: {
    200: jsonResponse(z.object({ authUrl: z.string() }), 'Where to send the user'),
    302: redirect('To the authorization server (browsers)'),
    ...oauthNotImplemented,
    ...errorResponses(400, 401, 403, 502),
  },
});
const oauthCallbackRoute = createRoute({
  ...base,
  method: 'get',
  path: '/oauth/{serviceType}/callback',
  summary:
    'Where the authorization server returns the user: checks state (single use, same user, not expired) and iss (RFC 9207), exchanges the code, seals the tokens',
  description:
    "Redirects (302) to the console's credentials page when the request accepts text/html, else answers JSON. A browser arriving from the authorization server's site without credentials gets a page that reloads the same URL from this origin, so the console's SameSite=Strict cookie comes along.",
  middleware: [requireApiKeyScope('credentials:write')] as const,
  request: { params: ServiceTypeParams },
  responses: {
    200: jsonResponse(
      z.object({ success: z.literal(true), credential: CredentialMetadata, returnTo: z.string() }),
      'Connected',
    ),
    302: redirect("To the console's credentials page (browsers)"),
    ...oauthNotImplemented,
    ...errorResponses(400, 401, 403, 502),
  },
});
const sharedCallbackRoute = createRoute({
  ...base,
  method: 'get',
  path: '/oauth/callback',
  summary:
    "The callback shared by every service type (the redirect URI of the gateway's client ID metadata document): the flow named by state says which",
  description:
    "Otherwise as `/oauth/{serviceType}/callback`; a flow started for a service type's own callback is refused here (400).",
  middleware: [requireApiKeyScope('credentials:write')] as const,
  responses: {
    200: jsonResponse(
      z.object({ success: z.literal(true), credential: CredentialMetadata, returnTo: z.string() }),
      'Connected',
    ),
    302: redirect("To the console's credentials page (browsers)"),
    ...oauthNotImplemented,
    ...errorResponses(400, 401, 403, 502),
  },
});
const userCredentialsRoute = createRoute({
  ...base,
  method: 'get',
  path: '/users/{userId}',
  summary: 'Which services a user has connected and their status (admins; metadata only, never a token)',
  middleware: [requirePermission('user:manage')] as const,
  request: { params: z.object({ userId: z.string().openapi({ param: { name: 'userId', in: 'path' } }) }) },
  responses: {
    200: jsonResponse(z.object({ userId: z.string(), credentials: z.array(CredentialMetadata) }), 'Credentials'),
    ...errorResponses(401, 403),
  },
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

/** A browser navigation (link, redirect), as opposed to an API client or the console's fetch. */
const wantsHtml = (c: Context): boolean => /\btext\/html\b/.test(c.req.header('accept') ?? '');

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * The authorization server's redirect is a cross-site navigation: the browser withholds the
 * console's SameSite=Strict cookie. Such a request (no credentials of its own) gets a page that
 * reloads the same URL from this origin, which the browser treats as same-site. Everything else
 * goes on to authentication.
 */
const sameSiteBounce = createMiddleware(async (c, next) => {
  const headers = c.req.raw.headers;
  const bringsCredentials = ['authorization', 'x-api-key', 'x-gateway-session-token'].some((name) => headers.has(name));
  if (bringsCredentials || c.req.header('sec-fetch-site') !== 'cross-site' || !wantsHtml(c)) return next();
  const url = new URL(c.req.url);
  const target = escapeHtml(`${url.pathname}${url.search}`);
  c.header('cache-control', 'no-store');
  c.header('referrer-policy', 'no-referrer');
  return c.html(
    `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${target}"><title>Connecting…</title><p>Connecting… <a href="${target}">continue</a></p>`,
    200,
  );
});

/**
 * `/api/v1/credentials/*`: the caller's own vault entries (flexible auth; API keys need the
 * matching scope). Session tokens are refused: the agent's upstream holds one, and it must not
 * read or change the end user's credentials. Bodies are parsed in the handlers, after the
 * caller is known to act for a user.
 */
export function credentialsRoutes(deps: ServiceDeps, vault: Vault, connect: OAuthConnect): OpenAPIHono {
  const app = openApiApp();
  app.use('/oauth/:serviceType/callback', sameSiteBounce);
  app.use('/oauth/callback', sameSiteBounce);
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
    return c.json(await vault.resolve({ userId, tenantId, serviceTypes, recipient: { kind: 'owner' } }), 200);
  });

  app.openapi(checkRoute, async (c) => {
    const { userId, tenantId } = actingUser(c);
    return c.json(await vault.check({ userId, tenantId, serviceType: pathServiceType(c) }), 200);
  });

  app.openapi(oauthAuthRoute, async (c) => {
    const { userId, tenantId } = actingUser(c);
    const { authUrl } = await connect.start({ userId, tenantId, serviceType: pathServiceType(c) });
    return wantsHtml(c) ? c.redirect(authUrl, 302) : c.json({ authUrl }, 200);
  });

  app.openapi(oauthCallbackRoute, async (c) => {
    const { userId } = actingUser(c);
    const { credential, returnTo } = await connect.complete({
      userId,
      serviceType: pathServiceType(c),
      callback: new URL(c.req.url),
    });
    return wantsHtml(c) ? c.redirect(returnTo, 302) : c.json({ success: true as const, credential, returnTo }, 200);
  });

  app.openapi(sharedCallbackRoute, async (c) => {
    const { userId } = actingUser(c);
    const { credential, returnTo } = await connect.complete({
      userId,
      serviceType: null,
      callback: new URL(c.req.url),
    });
    return wantsHtml(c) ? c.redirect(returnTo, 302) : c.json({ success: true as const, credential, returnTo }, 200);
  });

  app.openapi(userCredentialsRoute, async (c) => {
    const { userId } = c.req.valid('param');
    return c.json({ userId, credentials: await vault.list(userId) }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { userId } = actingUser(c);
    await vault.remove(userId, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });

  return app;
}
