import { secretBoxFor } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import {
  createVault,
  createVaultOAuth,
  MemoryRefreshLock,
  RedisRefreshLock,
  type RefreshLock,
} from '@agentgw/credentials';
import { json } from '@agentgw/db';
import { testHost } from '@agentgw/service-kit/testing';
import { startOidcServer, type OidcServer } from '@agentgw/testkit';
import { Redis } from 'ioredis';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { vaultService } from './service.js';
import { startVaultUnderTest, type VaultFixture } from './vault.fixtures.js';

const VAULT = 'http://vault.test';
const CONSOLE = 'http://console.test';
const RESOURCE = 'https://api.acme.test';
const CLIENT = { clientId: 'agentgw', clientSecret: 'client-secret-of-agentgw' };
const callbackOf = (serviceType: string) => `${VAULT}/api/v1/credentials/oauth/${serviceType}/callback`;

type Headers = Record<string, string>;

const backends = ['pglite', ...(process.env.TEST_DATABASE_URL ? (['postgres'] as const) : [])] as const;

describe.each(backends)('OAuth connect on %s', (backend) => {
  let oidc: OidcServer;
  let f: VaultFixture;

  beforeAll(async () => {
    oidc = await startOidcServer({
      clients: [{ ...CLIENT, redirectUris: [callbackOf('acme'), callbackOf('other')] }],
      resource: RESOURCE,
      accessTokenTtlSeconds: 3600,
    });
    f = await startVaultUnderTest(backend, { OAUTH_CALLBACK_BASE_URL: VAULT, GATEWAY_PUBLIC_URL: CONSOLE });
  });
  afterAll(async () => {
    await f.close();
    await oidc.close();
  });
  beforeEach(async () => {
    await f.deps.db.deleteFrom('credential_providers').execute();
    await oauthProvider('acme', { issuer: oidc.issuer, resource: RESOURCE, scopes: ['openid', 'offline_access'] });
  });

  /** An oauth2 credential provider as admin-api stores it: the client secret sealed under the platform key. */
  async function oauthProvider(serviceType: string, config: Record<string, unknown>): Promise<string> {
    const id = newId();
    const clientSecret = secretBoxFor(f.deps.config).seal(CLIENT.clientSecret, id);
    await f.deps.db
      .insertInto('credential_providers')
      .values({
        id,
        name: serviceType,
        service_type: serviceType,
        auth_type: 'oauth2',
        description: null,
        config: json({ clientId: CLIENT.clientId, clientSecret, ...config }),
        tenant_id: null,
      })
      .execute();
    return id;
  }

  const get = (path: string, headers: Headers, app = f.app) =>
    app.request(path.startsWith('http') ? new URL(path).pathname + new URL(path).search : path, { headers });

  async function start(headers: Headers, serviceType = 'acme'): Promise<string> {
    const res = await get(`/api/v1/credentials/oauth/${serviceType}/auth`, headers);
    expect(res.status).toBe(200);
    return ((await res.json()) as { authUrl: string }).authUrl;
  }

  /** Logs `account` in at the authorization server and returns the callback URL it redirects to. */
  const authorize = (authUrl: string, account: string, serviceType = 'acme') =>
    oidc.authorize(`${authUrl}&login_hint=${account}`, callbackOf(serviceType));

  async function connect(headers: Headers, account: string): Promise<void> {
    const callback = await authorize(await start(headers), account);
    const res = await get(callback.href, headers);
    expect(res.status).toBe(200);
  }

  async function resolve(headers: Headers, serviceType = 'acme') {
    const { status, body } = await f.call('POST', '/api/v1/credentials/resolve', headers, {
      serviceTypes: [serviceType],
    });
    expect(status).toBe(200);
    return body as { credentials: Record<string, string>; missing: string[]; authUrls: Record<string, string> };
  }

  it('connects: PKCE S256 and state in the authorization URL, tokens sealed, the access token resolved for the resource', async () => {
    const user = await f.user();
    const authUrl = new URL(await start(user.headers));
    expect(authUrl.origin).toBe(oidc.issuer);
    expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authUrl.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(authUrl.searchParams.get('state')).toMatch(/^[\w-]{20,}$/);
    expect(authUrl.searchParams.get('redirect_uri')).toBe(callbackOf('acme'));
    expect(authUrl.searchParams.get('resource')).toBe(RESOURCE);

    const callback = await authorize(authUrl.href, 'alice');
    expect(callback.searchParams.get('iss')).toBe(oidc.issuer);
    const res = await get(callback.href, user.headers);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      credential: { kind: string; status: string; expiresAt: string };
      returnTo: string;
    };
    expect(body.credential).toMatchObject({
      kind: 'oauth2',
      status: 'connected',
      expiresAt: new Date(f.clock.now().getTime() + 3600_000).toISOString(),
    });
    expect(body.returnTo).toBe(`${CONSOLE}/credentials?connected=acme`);

    const { credentials } = await resolve(user.headers);
    const { payload } = await jwtVerify(credentials.acme!, createRemoteJWKSet(new URL(oidc.jwksUri)), {
      issuer: oidc.issuer,
      audience: RESOURCE,
    });
    expect(payload.sub).toBe('alice');
    // Nothing of the tokens is in the row's readable columns or the logs.
    const row = await f.deps.db
      .selectFrom('user_credentials')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(credentials.acme!.slice(-20));
    expect(JSON.stringify(f.logs)).not.toContain(credentials.acme!.slice(-20));
  });

  it('redirects a browser: /auth to the authorization server, the callback to the console', async () => {
    const user = await f.user();
    const html = { ...user.headers, accept: 'text/html' };
    const started = await get('/api/v1/credentials/oauth/acme/auth', html);
    expect(started.status).toBe(302);
    const callback = await authorize(started.headers.get('location')!, 'alice');
    const done = await get(callback.href, html);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe(`${CONSOLE}/credentials?connected=acme`);
  });

  it("answers the authorization server's cross-site redirect with a same-origin reload, so the console cookie comes along", async () => {
    const user = await f.user();
    const callback = await authorize(await start(user.headers), 'alice');
    const res = await get(callback.href, { accept: 'text/html', 'sec-fetch-site': 'cross-site' });
    expect(res.status).toBe(200);
    const page = await res.text();
    const target = `${callback.pathname}${callback.search}`.replaceAll('&', '&#38;');
    expect(page).toContain(`http-equiv="refresh" content="0;url=${target}"`);
    // The reload (same-origin, with the cookie) completes it.
    const reload = await get(callback.href, {
      cookie: `agentgw_session=${user.token}`,
      accept: 'text/html',
      'sec-fetch-site': 'same-origin',
    });
    expect(reload.status).toBe(302);
  });

  it('refuses a forged state, a reused one and an expired one', async () => {
    const user = await f.user();
    const callback = await authorize(await start(user.headers), 'alice');
    const forged = new URL(callback);
    forged.searchParams.set('state', 'forged-state-value-forged-state-value');
    expect(await errorOf(get(forged.href, user.headers))).toEqual([400, 'OAUTH_STATE_INVALID']);
    const noState = new URL(callback);
    noState.searchParams.delete('state');
    expect(await errorOf(get(noState.href, user.headers))).toEqual([400, 'OAUTH_STATE_INVALID']);

    expect((await get(callback.href, user.headers)).status).toBe(200);
    expect(await errorOf(get(callback.href, user.headers))).toEqual([400, 'OAUTH_STATE_INVALID']);

    const late = await authorize(await start(user.headers), 'alice');
    f.clock.advance(10 * 60_000 + 1);
    expect(await errorOf(get(late.href, user.headers))).toEqual([400, 'OAUTH_STATE_INVALID']);
  });

  it('refuses a callback of a flow another user started, and leaves it to its owner', async () => {
    const owner = await f.user();
    const intruder = await f.user();
    const callback = await authorize(await start(owner.headers), 'alice');
    expect(await errorOf(get(callback.href, intruder.headers))).toEqual([403, 'OAUTH_USER_MISMATCH']);
    expect((await resolve(intruder.headers)).missing).toEqual(['acme']);
    expect((await get(callback.href, owner.headers)).status).toBe(200);
  });

  it("refuses another user's code spliced into one's own callback (bound to their PKCE verifier) as a 400, storing nothing", async () => {
    const victim = await f.user();
    const attacker = await f.user();
    const victims = await authorize(await start(victim.headers), 'alice');
    const own = await authorize(await start(attacker.headers), 'mallory');
    const spliced = new URL(own);
    spliced.searchParams.set('code', victims.searchParams.get('code')!);
    expect(await errorOf(get(spliced.href, attacker.headers))).toEqual([400, 'OAUTH_CODE_REJECTED']);
    expect((await resolve(attacker.headers)).missing).toEqual(['acme']);
  });

  it('refuses a response naming another issuer (RFC 9207 mix-up) and one without a code', async () => {
    const user = await f.user();
    const callback = await authorize(await start(user.headers), 'alice');
    const mixedUp = new URL(callback);
    mixedUp.searchParams.set('iss', 'https://attacker.example');
    expect(await errorOf(get(mixedUp.href, user.headers))).toEqual([400, 'OAUTH_ISSUER_MISMATCH']);

    const denied = await authorize(await start(user.headers), 'alice');
    const errorResponse = new URL(denied);
    errorResponse.searchParams.delete('code');
    errorResponse.searchParams.set('error', 'access_denied');
    expect(await errorOf(get(errorResponse.href, user.headers))).toEqual([400, 'OAUTH_AUTHORIZATION_DENIED']);
    expect((await resolve(user.headers)).missing).toEqual(['acme']);
  });

  it('answers 501 for a provider without an authorization server, and points authUrls at the flow for one with', async () => {
    const user = await f.user();
    await f.provider({
      serviceType: 'legacy',
      authType: 'oauth2',
      config: { clientId: 'x', clientSecret: 'y', scopes: [] },
    });
    expect(await errorOf(get('/api/v1/credentials/oauth/legacy/auth', user.headers))).toEqual([501, 'NOT_IMPLEMENTED']);
    expect((await resolve(user.headers)).authUrls).toEqual({ acme: `${VAULT}/api/v1/credentials/oauth/acme/auth` });
  });

  it('lets an auth started on one replica complete on another (flow state in the database)', async () => {
    const replica = await testHost(vaultService, f.deps);
    try {
      const user = await f.user();
      const callback = await authorize(await start(user.headers), 'alice');
      const res = await get(callback.href, user.headers, replica.app);
      expect(res.status).toBe(200);
      expect((await resolve(user.headers)).missing).toEqual([]);
    } finally {
      await replica.stop({ deadlineMs: 1000 });
    }
  });

  it('refreshes before expiry (rotating the refresh token), and marks needs_reconnect when the server revokes the grant', async () => {
    const user = await f.user();
    await connect(user.headers, 'bob');
    const first = (await resolve(user.headers)).credentials.acme!;

    f.clock.advance(3600_000 - 30_000); // within a minute of the expiry
    const refreshesBefore = oidc.tokenRequests.filter((t) => t === 'refresh_token').length;
    const second = (await resolve(user.headers)).credentials.acme!;
    expect(second).not.toBe(first);
    expect(oidc.tokenRequests.filter((t) => t === 'refresh_token').length).toBe(refreshesBefore + 1);
    // Fresh for another hour: no refresh now.
    expect((await resolve(user.headers)).credentials.acme).toBe(second);

    await oidc.revokeAccount('bob');
    f.clock.advance(3600_000 - 30_000);
    const afterRevoke = await resolve(user.headers);
    expect(afterRevoke.missing).toEqual(['acme']);
    expect(afterRevoke.authUrls.acme).toBe(`${VAULT}/api/v1/credentials/oauth/acme/auth`);
    const { body } = await f.call('GET', '/api/v1/credentials', user.headers);
    expect(body.credentials).toMatchObject([{ serviceType: 'acme', kind: 'oauth2', status: 'needs_reconnect' }]);
  });

  it('refreshes once when two replicas race for an expiring token', async () => {
    const user = await f.user();
    await connect(user.headers, 'erin');
    const locks = sharedRefreshLocks();
    const replicas = locks.map((lock) => {
      const oauth = createVaultOAuth({ ...f.deps, lock });
      return { oauth, vault: createVault({ ...f.deps, oauth }) };
    });
    try {
      f.clock.advance(3600_000 - 30_000);
      const before = oidc.tokenRequests.filter((t) => t === 'refresh_token').length;
      const answers = await Promise.all(
        replicas.flatMap(({ vault }) =>
          [1, 2].map(() =>
            vault.resolve({ userId: user.id, tenantId: null, serviceTypes: ['acme'], recipient: { kind: 'owner' } }),
          ),
        ),
      );
      expect(oidc.tokenRequests.filter((t) => t === 'refresh_token').length).toBe(before + 1);
      expect(new Set(answers.map((a) => a.credentials.acme)).size).toBe(1);
    } finally {
      await Promise.all(replicas.map(({ oauth }) => oauth.close()));
    }
  });

  it('revokes at the server on disconnect', async () => {
    // Without a resource the server issues opaque tokens it keeps, so their revocation is visible there.
    await oauthProvider('other', { issuer: oidc.issuer, scopes: ['openid', 'offline_access'] });
    const user = await f.user();
    const callback = await authorize(await start(user.headers, 'other'), 'carol', 'other');
    expect((await get(callback.href, user.headers)).status).toBe(200);
    const token = (await resolve(user.headers, 'other')).credentials.other!;
    expect(await oidc.provider.AccessToken.find(token)).toBeDefined();
    const { body } = await f.call('GET', '/api/v1/credentials', user.headers);
    const [credential] = body.credentials as { id: string }[];
    expect((await f.call('DELETE', `/api/v1/credentials/${credential!.id}`, user.headers)).status).toBe(200);
    expect(await oidc.provider.AccessToken.find(token)).toBeUndefined();
  });

  it('records identity events: the account linked, refreshed, refused a refresh, linked again and disconnected', async () => {
    const user = await f.user();
    const events = async () =>
      (
        await f.deps.db
          .selectFrom('identity_events')
          .select(['type', 'actor_id', 'user_id', 'details'])
          .where('user_id', '=', user.id)
          .orderBy('created_at')
          .execute()
      ).map((e) => ({ type: e.type, actor: e.actor_id, details: e.details }));
    await connect(user.headers, 'dave');
    f.clock.advance(3600_000 - 30_000);
    const token = (await resolve(user.headers)).credentials.acme!; // refreshed
    await oidc.revokeAccount('dave');
    f.clock.advance(3600_000 - 30_000);
    expect((await resolve(user.headers)).missing).toEqual(['acme']); // refresh refused
    await connect(user.headers, 'dave');
    const { body } = await f.call('GET', '/api/v1/credentials', user.headers);
    const [credential] = body.credentials as { id: string }[];
    expect((await f.call('DELETE', `/api/v1/credentials/${credential!.id}`, user.headers)).status).toBe(200);

    const about = expect.objectContaining({ connectionId: credential!.id, serviceType: 'acme' });
    expect(await events()).toEqual([
      { type: 'connected_account.linked', actor: user.id, details: about },
      { type: 'connected_account.refreshed', actor: null, details: about },
      { type: 'connected_account.refresh_refused', actor: null, details: about },
      { type: 'connected_account.linked', actor: user.id, details: about },
      { type: 'connected_account.disconnected', actor: user.id, details: about },
    ]);
    expect(JSON.stringify(await events())).not.toContain(token.slice(-20));
  });

  it('shows admins which services a user connected, never a token', async () => {
    const user = await f.user();
    await connect(user.headers, 'dave');
    const admin = await f.user({ roles: ['admin'] });
    const { status, body } = await f.call('GET', `/api/v1/credentials/users/${user.id}`, admin.headers);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      userId: user.id,
      credentials: [{ serviceType: 'acme', kind: 'oauth2', status: 'connected' }],
    });
    expect(Object.keys((body.credentials as object[])[0]!).sort()).toEqual([
      'createdAt',
      'expiresAt',
      'id',
      'kind',
      'serviceType',
      'status',
      'updatedAt',
    ]);
    expect((await f.call('GET', `/api/v1/credentials/users/${user.id}`, user.headers)).status).toBe(403);
  });
});

/** Two replicas' refresh locks: on Redis (two connections) when TEST_REDIS_URL is set, else one in-process lock shared. */
function sharedRefreshLocks(): RefreshLock[] {
  const url = process.env.TEST_REDIS_URL;
  if (!url) {
    const lock = new MemoryRefreshLock();
    return [lock, lock];
  }
  const prefix = `test-${newId()}`;
  return [new RedisRefreshLock(new Redis(url), { prefix }), new RedisRefreshLock(new Redis(url), { prefix })];
}

async function errorOf(pending: Response | Promise<Response>): Promise<[number, string]> {
  const res = await pending;
  const body = (await res.json()) as { code: string };
  return [res.status, body.code];
}
