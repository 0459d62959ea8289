import { hasActingUser, jwtAuth, oauthIssuerOf, type Principal } from '@agentgw/auth';
import { UnauthorizedError, ValidationError } from '@agentgw/core';
import {
  SuccessBody,
  errorResponses,
  jsonBody,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type Provider from 'oidc-provider';
import { createAuthorizationServer, OAUTH_ROUTES } from './authorization-server.js';
import { listConnections, revokeConnection } from './connections.js';
import { registerExternalLoginRoutes } from './external-login.routes.js';
import { answerInteraction, viewInteraction } from './interactions.js';
import { askingBrowserOf, toProvider } from './provider-mount.js';
import { registrationRefusal } from './registration-bounds.js';

const UidParams = z.object({
  uid: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an interaction id')
    .openapi({ param: { name: 'uid', in: 'path' }, description: 'The id in the console URL /connect/<uid>' }),
});
const GrantParams = z.object({
  grantId: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'grantId', in: 'path' } }),
});
const Decision = z
  .object({ decision: z.enum(['approve', 'deny']) })
  .strict()
  .openapi('OAuthConsentDecision');
const ConnectionsQuery = z.object({
  userId: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .openapi({ description: "Another user's (user managers); default: the caller's own" }),
});

const InteractionSchema = z
  .object({
    uid: z.string(),
    client: z.object({ id: z.string(), name: z.string().nullable(), uri: z.string().nullable() }),
    redirect: z
      .discriminatedUnion('kind', [
        z.object({ kind: z.literal('origin'), origin: z.string() }),
        z.object({ kind: z.literal('this_computer') }),
      ])
      .openapi({
        description:
          'Where the code goes once approved: a web origin, or a program on this computer (loopback or private-scheme redirect)',
      }),
    resource: z.string().openapi({ description: 'The MCP endpoint the client asks for (RFC 8707 resource)' }),
    scopes: z.array(z.string()),
    remembered: z.boolean().openapi({ description: 'The user consented to this client, endpoint and scopes before' }),
  })
  .openapi('OAuthInteraction');
const ConnectionSchema = z
  .object({
    grantId: z.string(),
    userId: z.string(),
    clientId: z.string(),
    clientName: z.string().nullable(),
    resources: z.array(z.string()),
    createdAt: z.string(),
  })
  .openapi('OAuthConnection');

const common = { tags: ['OAuth clients'], security: jwtSecurity };
const viewRoute = createRoute({
  ...common,
  method: 'get',
  path: '/interactions/{uid}',
  summary: 'A pending MCP client sign-in, as the consent screen shows it',
  request: { params: UidParams },
  responses: {
    200: jsonResponse(InteractionSchema, 'The client, endpoint and scopes asked for'),
    ...errorResponses(400, 401, 403, 404),
  },
});
const answerRoute = createRoute({
  ...common,
  method: 'post',
  path: '/interactions/{uid}',
  summary: "The signed-in user's answer to a pending MCP client sign-in",
  description:
    'Approving grants the client the endpoint and scopes (remembered); denying answers it access_denied. The browser goes on to `redirectTo`, the authorization endpoint. Only the browser that started the sign-in (its interaction cookie) may answer: any other gets 403 STARTED_ELSEWHERE.',
  request: { params: UidParams, body: jsonBody(Decision) },
  responses: {
    200: jsonResponse(z.object({ redirectTo: z.string() }), 'Where the browser goes next'),
    ...errorResponses(400, 401, 403, 404),
  },
});
const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/connections',
  summary: 'MCP clients a user connected with OAuth (live grants)',
  request: { query: ConnectionsQuery },
  responses: {
    200: jsonResponse(z.object({ connections: z.array(ConnectionSchema) }), 'Newest first'),
    ...errorResponses(400, 401, 403, 404),
  },
});
const revokeRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/connections/{grantId}',
  summary: 'Revoke a connected MCP client (its tokens stop working on every replica at once)',
  request: { params: GrantParams },
  responses: { 200: jsonResponse(SuccessBody, 'Revoked'), ...errorResponses(400, 401, 403, 404) },
});

/** A discovery document of the authorization server (answered by oidc-provider itself). */
const discoveryRoute = (path: string, spec: string) =>
  createRoute({
    tags: ['OAuth clients'],
    method: 'get',
    path,
    summary: `The authorization server's metadata (${spec}): endpoints, PKCE S256, registration, client ID metadata documents`,
    responses: {
      200: jsonResponse(z.record(z.string(), z.unknown()).openapi('OAuthAuthorizationServerMetadata'), 'Metadata'),
      ...errorResponses(404, 429),
    },
  });

/** RFC 7591 registration: served by oidc-provider once within the bounds, documented here. */
const registrationRoute = createRoute({
  tags: ['OAuth clients'],
  method: 'post',
  path: OAUTH_ROUTES.registration,
  summary: 'Dynamic client registration (RFC 7591): anonymous, bounded',
  description:
    'Body ≤ 16 KiB, ≤ 10 redirect_uris, URIs and strings ≤ 2,000 characters, other lists ≤ 10 entries, client_name ≤ 100 characters without control or bidirectional-override characters. A client that obtains no grant within a day expires.',
  request: { body: jsonBody(z.record(z.string(), z.unknown()).openapi('OAuthClientMetadata')) },
  responses: {
    201: jsonResponse(z.record(z.string(), z.unknown()).openapi('OAuthClientInformation'), 'The registered client'),
    400: jsonResponse(
      z
        .object({
          error: z.enum(['invalid_redirect_uri', 'invalid_client_metadata']),
          error_description: z.string(),
        })
        .openapi('OAuthRegistrationError'),
      'Refused (RFC 7591 section 3.2.2)',
    ),
    ...errorResponses(404, 429),
  },
});

/** The signed-in person (console cookie or bearer login JWT). */
function signedInUser(principal: Principal): Principal & { userId: string } {
  if (!hasActingUser(principal)) throw new UnauthorizedError();
  return principal;
}

const off = () => new ValidationError('The OAuth authorization server is off: GATEWAY_PUBLIC_URL is not set');

/**
 * The gateway as the MCP clients' authorization server: oidc-provider on /oauth/* and the
 * discovery documents (RFC 8414 and OpenID), plus the JSON the console's /connect page and
 * Connected clients page use (`consoleRoutes`, documented, under /api/v1/oauth; "continue with"
 * an external issuer among them, unauthenticated). The provider
 * is built on first use (its keys come from the database), once per process.
 */
export function oauthServerRoutes(deps: ServiceDeps): { protocol: OpenAPIHono; console: OpenAPIHono } {
  let provider: Promise<Provider | null> | null = null;
  const ready = () =>
    (provider ??= createAuthorizationServer(deps).catch((err: unknown) => ((provider = null), Promise.reject(err))));
  const issuer = () => {
    const value = oauthIssuerOf(deps.config);
    if (value === undefined) throw off();
    return value;
  };
  const requireProvider = async () => {
    const value = await ready();
    if (value === null) throw off();
    return value;
  };

  const protocol = openApiApp();
  // Anonymous registration is bounded before oidc-provider stores anything (RFC 7591 errors).
  protocol.openAPIRegistry.registerPath(registrationRoute);
  protocol.post(OAUTH_ROUTES.registration, async (c) => {
    const server = await ready();
    const refused = server && registrationRefusal(await c.req.text());
    return refused ? c.json(refused, 400, { 'cache-control': 'no-store' }) : toProvider(deps, server, c);
  });
  protocol.all('/oauth/*', async (c) => toProvider(deps, await ready(), c));
  // oidc-provider writes these answers itself: documented from the route kit, served as plain routes.
  protocol.openAPIRegistry.registerPath(discoveryRoute('/.well-known/oauth-authorization-server', 'RFC 8414'));
  protocol.openAPIRegistry.registerPath(
    discoveryRoute('/.well-known/openid-configuration', 'OpenID Connect Discovery'),
  );
  protocol.get('/.well-known/oauth-authorization-server', async (c) =>
    toProvider(deps, await ready(), c, '/.well-known/openid-configuration'),
  );
  protocol.get('/.well-known/openid-configuration', async (c) => toProvider(deps, await ready(), c));

  const app = openApiApp();
  // "Continue with" answers before anyone is signed in: registered ahead of the authentication below.
  registerExternalLoginRoutes(app, deps, { provider: requireProvider, issuer });
  app.use('*', jwtAuth(deps.auth));
  app.openapi(viewRoute, async (c) =>
    c.json(
      await viewInteraction(
        deps.db,
        await requireProvider(),
        issuer(),
        signedInUser(c.var.principal),
        c.req.valid('param').uid,
        askingBrowserOf(c),
      ),
      200,
    ),
  );
  app.openapi(answerRoute, async (c) => {
    const user = signedInUser(c.var.principal);
    return c.json(
      await answerInteraction(
        deps.db,
        await requireProvider(),
        issuer(),
        user,
        c.req.valid('param').uid,
        askingBrowserOf(c),
        c.req.valid('json').decision,
      ),
      200,
    );
  });
  app.openapi(listRoute, async (c) => {
    const user = signedInUser(c.var.principal);
    return c.json(
      { connections: await listConnections(deps.db, user, c.req.valid('query').userId ?? user.userId) },
      200,
    );
  });
  app.openapi(revokeRoute, async (c) => {
    await revokeConnection(deps, signedInUser(c.var.principal), c.req.valid('param').grantId);
    return c.json({ success: true as const }, 200);
  });
  return { protocol, console: app };
}
