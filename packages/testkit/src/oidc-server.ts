import { exportJWK, generateKeyPair } from 'jose';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';
import { metadataDocumentAdapter } from './oidc-metadata-documents.js';

/** A confidential client the fixture registers (the gateway's vault in tests). */
export interface OidcTestClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface OidcServerOptions {
  clients: OidcTestClient[];
  /** The resource server (RFC 8707) whose access tokens are JWTs signed with the fixture's key (when a request names it; other tokens are opaque); its scope is `api:read`. */
  resource?: string;
  /** Access token lifetime in seconds (default 3600). */
  accessTokenTtlSeconds?: number;
  /**
   * `auto` (default): every interaction logs in the account named by the authorization request's
   * `login_hint` (default `alice`) and grants what was asked, with no page. `pages`: oidc-provider's
   * own login and consent pages (any login name is accepted), for browser tests.
   */
  interactions?: 'auto' | 'pages';
  /** Open dynamic client registration (RFC 7591) at `/reg`, for clients that register themselves (default off). */
  registration?: boolean;
  /**
   * ID tokens carry `email` (`<login>@oidc.test`) and `email_verified: true` when the `email` scope
   * is granted, as sign-in providers do (the gateway's "continue with" reads only the ID token); default off.
   */
  verifiedEmails?: boolean;
  /** Accept client ID metadata documents (an http(s) URL as client_id, its document fetched) and say so in the metadata (default off). */
  clientMetadataDocuments?: boolean;
}

/** A real OpenID provider (oidc-provider) on loopback: discovery, PKCE, refresh rotation, revocation, iss in responses. */
export interface OidcServer {
  issuer: string;
  /** The JWKS URL access tokens for `resource` verify against. */
  jwksUri: string;
  provider: Provider;
  /**
   * Follows an authorization URL through the server's redirects and (in `auto` mode) its
   * interaction, carrying its cookies, until it redirects to a URL starting with `redirectPrefix`:
   * that URL (with `code`, `state`, `iss`).
   */
  authorize(authUrl: string, redirectPrefix: string): Promise<URL>;
  /** Revokes every grant of the account, in either interaction mode (its refresh and access tokens stop working). */
  revokeAccount(accountId: string): Promise<void>;
  /** Token requests by grant type, in the order they arrived (`refresh_token` entries count the refreshes; `…:error` for refused ones). */
  tokenRequests: string[];
  /** Client ID metadata document URLs the server fetched, in order (with `clientMetadataDocuments`). */
  metadataDocumentsFetched: string[];
  close(): Promise<void>;
}

/** Starts an OpenID provider on 127.0.0.1 (port 0) with the given clients. */
export async function startOidcServer(options: OidcServerOptions): Promise<OidcServer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const mode = options.interactions ?? 'auto';
  const ttl = options.accessTokenTtlSeconds ?? 3600;
  const tokenRequests: string[] = [];
  const grantsByAccount = new Map<string, Set<string>>();
  const metadataDocumentsFetched: string[] = [];
  const documents = options.clientMetadataDocuments === true;

  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const server = createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  // Idle connections stay open longer than any relying party reuses them (undici: 4 s), as behind a
  // real provider's load balancer. At Node's 5 s default, a gateway that stalled under CI load sent
  // its token request on a connection the provider had just closed (ECONNRESET; see the test).
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const resource = options.resource;
  const configuration: Configuration = {
    clients: options.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    ...(documents && {
      adapter: metadataDocumentAdapter(metadataDocumentsFetched),
      discovery: { client_id_metadata_document_supported: true },
    }),
    jwks: { keys: [jwk] },
    cookies: { keys: ['oidc-fixture-cookie-key'] },
    scopes: ['openid', 'offline_access', 'email'],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: mode === 'pages' },
      revocation: { enabled: true },
      registration: { enabled: options.registration ?? false },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: resource !== undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'api:read',
          audience: resource,
          accessTokenTTL: ttl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    ttl: {
      AccessToken: ttl,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: 86_400,
      RefreshToken: 86_400,
    },
    issueRefreshToken: () => true,
    rotateRefreshToken: true,
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, email: `${sub}@oidc.test`, ...(options.verifiedEmails && { email_verified: true }) }),
    }),
    ...(options.verifiedEmails && {
      claims: { openid: ['sub'], email: ['email', 'email_verified'] },
      conformIdTokenClaims: false,
    }),
    ...(mode === 'auto' && { interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` } }),
  };
  const provider = new Provider(issuer, configuration);
  provider.on('grant.success', (ctx: { oidc: { params?: { grant_type?: unknown } } }) => {
    tokenRequests.push(String(ctx.oidc.params?.grant_type));
  });
  // Every saved grant (the `auto` interaction's and the login/consent pages' alike), so revokeAccount finds them.
  provider.on('grant.saved', (grant: { accountId?: string; jti: string }) => {
    if (!grant.accountId) return;
    const mine = grantsByAccount.get(grant.accountId) ?? new Set<string>();
    mine.add(grant.jti);
    grantsByAccount.set(grant.accountId, mine);
  });
  provider.on('grant.error', (ctx: { oidc: { params?: { grant_type?: unknown } } }) => {
    tokenRequests.push(`${String(ctx.oidc.params?.grant_type)}:error`);
  });

  const oidcCallback = provider.callback();
  handler = (req, res) => {
    if (mode === 'auto' && req.url?.startsWith('/interaction/')) {
      void finishInteraction(provider, req, res).catch((err: unknown) => {
        res.writeHead(500).end(String(err));
      });
      return;
    }
    void oidcCallback(req, res);
  };

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    provider,
    tokenRequests,
    metadataDocumentsFetched,
    authorize: (authUrl, redirectPrefix) => followRedirects(authUrl, redirectPrefix),
    async revokeAccount(accountId) {
      for (const grantId of grantsByAccount.get(accountId) ?? []) {
        const grant = await provider.Grant.find(grantId);
        await grant?.destroy();
        await Promise.all([
          provider.RefreshToken.revokeByGrantId(grantId),
          provider.AccessToken.revokeByGrantId(grantId),
        ]);
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The `auto` interaction: log in the `login_hint` account and grant every scope and the resource asked for. */
async function finishInteraction(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const params = details.params as Record<string, string | undefined>;
  const accountId = params.login_hint ?? 'alice';
  const grant = new provider.Grant({ accountId, clientId: params.client_id ?? '' });
  if (params.scope) grant.addOIDCScope(params.scope.split(' ').filter((s) => !s.includes(':')));
  if (params.resource) grant.addResourceScope(params.resource, 'api:read');
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

/** GETs `url` and its redirects with a cookie jar until a Location starts with `prefix`. */
async function followRedirects(url: string, prefix: string): Promise<URL> {
  const jar = new Map<string, string>();
  let next = url;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(next, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = res.headers.get('location');
    if (!location)
      throw new Error(`authorization stopped at ${next} with ${res.status}: ${(await res.text()).slice(0, 300)}`);
    await res.body?.cancel();
    const target = new URL(location, next);
    if (target.href.startsWith(prefix)) return target;
    next = target.href;
  }
  throw new Error('authorization did not reach the redirect URI in 10 hops');
}
