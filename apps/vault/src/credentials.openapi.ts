import { requireApiKeyScope, requirePermission } from '@agentgw/auth';
import { CREDENTIAL_STATUSES } from '@agentgw/core';
import {
  documentedJsonBody,
  errorResponses,
  flexibleSecurity,
  IdParams,
  jsonResponse,
  SuccessBody,
} from '@agentgw/service-kit';
import { createRoute, z } from '@hono/zod-openapi';

/* The contracts of `/api/v1/credentials/*` (bodies, answers, routes); the handlers are in credentials.routes.ts. */

/** What a service type looks like (lower-case slug). */
export const SERVICE_TYPE_PATTERN = /^[a-z][a-z0-9_]*$/;
/** A service type, checked. */
export const serviceTypeSchema = z.string().max(64).regex(SERVICE_TYPE_PATTERN, 'must match ^[a-z][a-z0-9_]*$');
/** Service types asked for at once (at most 100). */
export const serviceTypesSchema = z.array(serviceTypeSchema).max(100);

/** A JWT to store, with its expiry. */
export const jwtBody = z.object({
  serviceType: serviceTypeSchema,
  token: z.string().min(1).max(16_384),
  expiresAt: z.iso.datetime({ offset: true }),
});
/** An API key to store. */
export const apiKeyBody = z.object({
  serviceType: serviceTypeSchema,
  apiKey: z.string().min(1).max(16_384),
});
/** The service types whose credentials are asked for. */
export const resolveBody = z.object({ serviceTypes: serviceTypesSchema });

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

const base = { tags: ['Credentials'], security: flexibleSecurity };
const oauthNotImplemented = { 501: errorResponses(501)[501] };
const redirect = (what: string) => ({ description: what, headers: z.object({ location: z.string() }) });
/** What an OAuth callback answers: the stored credential and where to go, or a redirect there for browsers. */
const connectedResponses = {
  200: jsonResponse(
    z.object({ success: z.literal(true), credential: CredentialMetadata, returnTo: z.string() }),
    'Connected',
  ),
  302: redirect("To the console's credentials page (browsers)"),
  ...oauthNotImplemented,
  ...errorResponses(400, 401, 403, 502),
};

/** Route `list`: its OpenAPI contract (handler: credentials.routes.ts). */
export const listRoute = createRoute({
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
/** A route storing (or replacing) one kind of credential from its JSON body. */
const storeRoute = <Body extends z.ZodType>(path: string, summary: string, body: Body) =>
  createRoute({
    ...base,
    method: 'post',
    path,
    summary,
    middleware: [requireApiKeyScope('credentials:write')] as const,
    request: { body: documentedJsonBody(body) },
    responses: {
      201: jsonResponse(z.object({ success: z.literal(true), credential: CredentialMetadata }), 'Stored'),
      ...errorResponses(400, 401, 403),
    },
  });
/** Route `storeJwt`: its OpenAPI contract (handler: credentials.routes.ts). */
export const storeJwtRoute = storeRoute('/jwt', 'Store (or replace) a JWT for a service type', jwtBody);
/** Route `storeApiKey`: its OpenAPI contract (handler: credentials.routes.ts). */
export const storeApiKeyRoute = storeRoute('/apikey', 'Store (or replace) an API key for a service type', apiKeyBody);
/** Route `resolve`: its OpenAPI contract (handler: credentials.routes.ts). */
export const resolveRoute = createRoute({
  ...base,
  method: 'post',
  path: '/resolve',
  summary: "The caller's credential values for the given service types, what is missing, and where to connect it",
  middleware: [requireApiKeyScope('credentials:resolve')] as const,
  request: { body: documentedJsonBody(resolveBody) },
  responses: { 200: jsonResponse(Resolution, 'Resolved'), ...errorResponses(400, 401, 403) },
});
/** Route `check`: its OpenAPI contract (handler: credentials.routes.ts). */
export const checkRoute = createRoute({
  ...base,
  method: 'get',
  path: '/check/{serviceType}',
  summary: 'Whether the caller has a usable credential for a service type',
  middleware: [requireApiKeyScope('credentials:resolve')] as const,
  request: { params: ServiceTypeParams },
  responses: { 200: jsonResponse(CheckResult, 'Check result'), ...errorResponses(400, 401, 403) },
});
/** Route `oauthAuth`: its OpenAPI contract (handler: credentials.routes.ts). */
export const oauthAuthRoute = createRoute({
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
/** Route `oauthCallback`: its OpenAPI contract (handler: credentials.routes.ts). */
export const oauthCallbackRoute = createRoute({
  ...base,
  method: 'get',
  path: '/oauth/{serviceType}/callback',
  summary:
    'Where the authorization server returns the user: checks state (single use, same user, not expired) and iss (RFC 9207), exchanges the code, seals the tokens',
  description:
    "Redirects (302) to the console's credentials page when the request accepts text/html, else answers JSON. A browser arriving from the authorization server's site without credentials gets a page that reloads the same URL from this origin, so the console's SameSite=Strict cookie comes along.",
  middleware: [requireApiKeyScope('credentials:write')] as const,
  request: { params: ServiceTypeParams },
  responses: connectedResponses,
});
/** Route `sharedCallback`: its OpenAPI contract (handler: credentials.routes.ts). */
export const sharedCallbackRoute = createRoute({
  ...base,
  method: 'get',
  path: '/oauth/callback',
  summary:
    "The callback shared by every service type (the redirect URI of the gateway's client ID metadata document): the flow named by state says which",
  description:
    "Otherwise as `/oauth/{serviceType}/callback`; a flow started for a service type's own callback is refused here (400).",
  middleware: [requireApiKeyScope('credentials:write')] as const,
  responses: connectedResponses,
});
/** Route `userCredentials`: its OpenAPI contract (handler: credentials.routes.ts). */
export const userCredentialsRoute = createRoute({
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
/** Route `delete`: its OpenAPI contract (handler: credentials.routes.ts). */
export const deleteRoute = createRoute({
  ...base,
  method: 'delete',
  path: '/{id}',
  summary: "Delete one of the caller's credentials",
  middleware: [requireApiKeyScope('credentials:write')] as const,
  request: { params: IdParams },
  responses: { 200: jsonResponse(SuccessBody, 'Deleted'), ...errorResponses(401, 403, 404) },
});
