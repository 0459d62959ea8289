import { recordIdentityEvent } from '@agentgw/audit';
import { createHmac } from 'node:crypto';
import { isMcpResource, loadOAuthSigningKeys, MCP_SCOPE, oauthIssuerOf, secretBoxFor } from '@agentgw/auth';
import { createEgressDispatcher, egressFetch, egressPolicyFromConfig, trimOldest } from '@agentgw/core';
import type { ServiceDeps } from '@agentgw/service-kit';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { ClientMetadataDocuments } from './client-metadata-documents.js';
import { tenantOf } from './connections.js';
import { KyselyOidcAdapter, type OidcAdapterDeps } from './kysely-oidc-adapter.js';

/** Where the console shows sign-in and consent for an interaction (a console page, not an API route). */
export const CONSENT_PAGE_PATH = '/connect';

/** Where the console's API reads and answers an interaction (`<path>/<uid>`): its browser cookie is scoped there. */
export const CONSENT_API_PATH = '/api/v1/oauth/interactions';

/** oidc-provider's options for its short-lived cookies (the interaction and resume ones), spelled out to reuse them. */
const SHORT_COOKIE = { httpOnly: true, sameSite: 'lax' } as const;

/** How long a pending sign-in lives (seconds): its row and the cookies that bind it to a browser. */
const INTERACTION_TTL = 900;

/** The authorization server's endpoints, all under /oauth/ (discovery stays at the well-known paths). */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  end_session: '/oauth/session/end',
  userinfo: '/oauth/userinfo',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
} as const;

/**
 * The accounts of grants the adapter just deleted, until oidc-provider's `grant.revoked` event (emitted
 * right after, in this process) takes them: bounded, so entries no event takes cannot pile up.
 */
class RevokedGrantAccounts {
  private static readonly MAX = 1000;
  private readonly accounts = new Map<string, string>();

  remember(grantId: string, accountId: string): void {
    this.accounts.set(grantId, accountId);
    trimOldest(this.accounts, RevokedGrantAccounts.MAX);
  }

  take(grantId: string): string | null {
    const accountId = this.accounts.get(grantId) ?? null;
    this.accounts.delete(grantId);
    return accountId;
  }
}

/** Why oidc-provider itself ended a grant: a rotated refresh token or a code used again, or the client's revocation. */
function revocationCause(ctx: KoaContextWithOIDC): string {
  if (ctx.oidc.route === 'revocation') return 'client_revocation';
  return ctx.oidc.params?.grant_type === 'authorization_code' ? 'code_replay' : 'refresh_token_reuse';
}

/**
 * Records a grant oidc-provider revoked (its event handlers cannot be awaited: the row is written
 * beside the answer, a failure logged). A user's revocation on the console is recorded where it happens.
 */
function recordProviderRevocation(
  deps: ServiceDeps,
  ctx: KoaContextWithOIDC,
  grantId: string,
  userId: string | null,
): void {
  void (userId === null ? Promise.resolve(null) : tenantOf(deps.db, userId))
    .then((tenantId) =>
      recordIdentityEvent(deps.db, {
        type: 'oauth.grant_revoked',
        actorId: null,
        userId,
        tenantId,
        clientId: ctx.oidc.client?.clientId ?? null,
        details: { grantId, by: revocationCause(ctx) },
      }),
    )
    .catch((err: unknown) =>
      deps.logger.error({ reason: err instanceof Error ? err.message : String(err), grantId }, 'Identity event lost'),
    );
}

/**
 * oidc-provider configured as the MCP authorization server: authorization code with PKCE S256
 * only, dynamic client registration and client ID metadata documents, `resource` required and
 * bound into a short JWT access token (ES256, key in the database), rotating refresh tokens
 * whose reuse revokes the grant, revocation; every model in the database (any replica serves
 * any step). Sign-in and consent happen on the console's /connect page.
 */
export async function createAuthorizationServer(deps: ServiceDeps): Promise<Provider | null> {
  const issuer = oauthIssuerOf(deps.config);
  if (issuer === undefined) return null;
  const keys = await loadOAuthSigningKeys(deps.db, secretBoxFor(deps.config));
  const documents = new ClientMetadataDocuments(
    egressFetch(createEgressDispatcher(egressPolicyFromConfig(deps.config))),
  );
  const revokedAccounts = new RevokedGrantAccounts();
  const adapterDeps: OidcAdapterDeps = {
    db: deps.db,
    bus: deps.bus,
    externalClient: (id) => documents.clientOf(id),
    grantRevoked: (grantId, accountId) => revokedAccounts.remember(grantId, accountId),
  };
  const ttl = deps.config.OAUTH_ACCESS_TOKEN_TTL_SECONDS;
  // Cookies are signed with a key every replica derives from the shared signing key.
  const cookieKey = createHmac('sha256', String(keys[0]!.d)).update('agentgw oauth cookies').digest('base64url');

  const resourceServer = (resource: string) => ({
    scope: MCP_SCOPE,
    audience: resource,
    accessTokenTTL: ttl,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: 'ES256' as const } },
  });

  const configuration: Configuration = {
    adapter: (name: string) => new KyselyOidcAdapter(name, adapterDeps),
    jwks: { keys: keys },
    cookies: { keys: [cookieKey], short: SHORT_COOKIE },
    routes: OAUTH_ROUTES,
    scopes: ['openid', 'offline_access', MCP_SCOPE],
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      // The only key is ES256: without this default a registration is refused for asking RS256 ID tokens.
      id_token_signed_response_alg: 'ES256',
    },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    discovery: { client_id_metadata_document_supported: true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      // A public client may revoke its own tokens (RFC 7009 section 2.1), never another client's.
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      userinfo: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // MCP clients must name the endpoint (RFC 8707): a request without `resource` is refused.
        defaultResource: () => {
          throw new errors.InvalidTarget('the resource parameter is required');
        },
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: KoaContextWithOIDC, resource: string) => {
          if (!isMcpResource(issuer, resource))
            throw new errors.InvalidTarget('resource is not an MCP endpoint of this gateway');
          return resourceServer(resource);
        },
      },
    },
    extraTokenClaims: (_ctx, token) =>
      'grantId' in token && typeof token.grantId === 'string' ? { gid: token.grantId } : undefined,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Every refresh rotates; a rotated token used again, a replayed code or a client's revocation ends the
    // whole grant: every token of it and the grant itself (the adapter's revokeByGrantId deletes them all).
    rotateRefreshToken: true,
    revokeGrantPolicy: () => true,
    ttl: {
      AccessToken: ttl,
      AuthorizationCode: 60,
      Interaction: INTERACTION_TTL,
      Session: 14 * 86_400,
      Grant: 90 * 86_400,
      RefreshToken: 30 * 86_400,
    },
    interactions: {
      url: (ctx, interaction) => {
        // oidc-provider scopes its interaction cookie to the console page, where nothing is answered;
        // this copy is sent where the answer is, so only the browser that started the sign-in may answer.
        ctx.cookies.set(ctx.oidc.provider.cookieName('interaction'), interaction.uid, {
          ...SHORT_COOKIE,
          path: `${CONSENT_API_PATH}/${interaction.uid}`,
          maxAge: INTERACTION_TTL * 1000,
        });
        return `${CONSENT_PAGE_PATH}/${interaction.uid}`;
      },
    },
    findAccount: async (_ctx, sub) => {
      const user = await deps.db.selectFrom('users').select(['id']).where('id', '=', sub).executeTakeFirst();
      return user ? { accountId: user.id, claims: () => ({ sub: user.id }) } : undefined;
    },
    clientBasedCORS: () => true,
    renderError: (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
  const provider = new Provider(issuer, configuration);
  // Behind the router's TLS the public URL says https; trust its X-Forwarded-Proto for secure cookies.
  provider.proxy = issuer.startsWith('https:');
  provider.on('server_error', (_ctx, err) =>
    deps.logger.error({ reason: err.message }, 'OAuth authorization server error'),
  );
  provider.on('grant.revoked', (ctx, grantId) =>
    recordProviderRevocation(deps, ctx, grantId, revokedAccounts.take(grantId)),
  );
  return provider;
}
