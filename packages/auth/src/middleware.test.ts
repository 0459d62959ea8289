import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler, MemoryEventBus, newId, newRequestId } from '@agentgw/core';
import { json } from '@agentgw/db';
import { openTestDatabase, testBackends } from '@agentgw/db/testing';
import { CONSOLE_COOKIE } from './console-session.js';
import {
  flexibleAuth,
  jwtAuth,
  requestUserToken,
  requireApiKeyScope,
  requirePermission,
  requireRole,
} from './middleware.js';
import { createAuth, type AuthService } from './service.js';
import { testConfig } from './auth.fixtures.js';
import { generateApiKey, generateRuntimeToken } from './tokens.js';

describe.each(testBackends())('auth middlewares (%s)', (backend) => {
  let handle: Awaited<ReturnType<typeof openTestDatabase>>;
  let auth: AuthService;
  let app: Hono;
  const bus = new MemoryEventBus();
  const admin = { id: newId(), email: 'root@x.io', roles: ['admin' as const], tenantId: null };
  const creator = { id: newId(), email: 'maker@x.io', roles: ['agent_creator' as const], tenantId: 'T' };
  const apiKey = generateApiKey();
  const agentId = newId();
  const runtimeToken = generateRuntimeToken();

  beforeAll(async () => {
    handle = await openTestDatabase(backend);
    await handle.db
      .insertInto('users')
      .values(
        [admin, creator].map((u) => ({
          id: u.id,
          email: u.email,
          password_hash: 'unused',
          name: null,
          tenant_id: u.tenantId,
          roles: u.roles,
        })),
      )
      .execute();
    await handle.db
      .insertInto('api_keys')
      .values({
        id: newId(),
        name: 'k',
        key_hash: apiKey.hash,
        key_prefix: apiKey.prefix,
        scopes: ['credentials:resolve'],
        user_id: admin.id,
        tenant_id: null,
      })
      .execute();
    await handle.db
      .insertInto('agents')
      .values({
        id: agentId,
        name: 'a',
        description: null,
        upstream_url: 'http://127.0.0.1:9/',
        upstream_secret_enc: null,
        required_credentials: json([]),
        tenant_id: null,
        owner_id: null,
        runtime_token_hash: runtimeToken.hash,
        runtime_token_prefix: runtimeToken.prefix,
      })
      .execute();
    auth = await createAuth({ config: testConfig(), db: handle.db, bus });

    app = new Hono();
    app.onError(errorHandler());
    app.get('/me', jwtAuth(auth), (c) => c.json({ userId: c.var.principal.userId, via: c.var.principal.via }));
    app.post('/agents', jwtAuth(auth), requirePermission('agent:update:all', 'agent:create'), (c) =>
      c.json({ ok: true }),
    );
    app.post('/providers', jwtAuth(auth), requirePermission('provider:create'), (c) => c.json({ ok: true }));
    app.get('/admin', jwtAuth(auth), requireRole('admin'), (c) => c.json({ ok: true }));
    app.post('/resolve', flexibleAuth(auth), requireApiKeyScope('credentials:resolve'), (c) =>
      c.json({ via: c.var.principal.via }),
    );
    app.post('/write', flexibleAuth(auth), requireApiKeyScope('credentials:write'), (c) =>
      c.json({ via: c.var.principal.via }),
    );
    app.get('/mcp', flexibleAuth(auth, { sessionTokens: 'accept' }), (c) => c.json({ via: c.var.principal.via }));
    app.get('/token', jwtAuth(auth), (c) => c.json({ token: requestUserToken(c) }));
    app.get('/unguarded', requirePermission('agent:read'), (c) => c.json({ ok: true }));
  });

  afterAll(async () => {
    await auth?.close();
    await handle?.close();
  });

  const call = async (method: string, path: string, headers: Record<string, string> = {}) => {
    const res = await app.request(path, { method, headers });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const as = async (user: typeof admin | typeof creator) => ({
    authorization: `Bearer ${await auth.signUserToken(user)}`,
  });

  it('answers 401 with the one error body, without details of the failure', async () => {
    expect(await call('GET', '/me')).toEqual({
      status: 401,
      body: { code: 'UNAUTHORIZED', message: expect.any(String) },
    });
    const res = await call('GET', '/me', { authorization: 'Bearer nope.nope.nope' });
    expect(res).toEqual({ status: 401, body: { code: 'INVALID_TOKEN', message: 'Invalid token' } });
  });

  it('sets c.var.principal', async () => {
    expect(await call('GET', '/me', await as(creator))).toEqual({
      status: 200,
      body: { userId: creator.id, via: 'jwt' },
    });
  });

  it('requirePermission passes on any listed permission and names the missing ones', async () => {
    expect((await call('POST', '/agents', await as(creator))).status).toBe(200);
    expect(await call('POST', '/providers', await as(creator))).toEqual({
      status: 403,
      body: { code: 'FORBIDDEN', message: 'Missing permission: provider:create', required: ['provider:create'] },
    });
    expect((await call('POST', '/providers', await as(admin))).status).toBe(200);
  });

  it('requireRole', async () => {
    expect((await call('GET', '/admin', await as(admin))).status).toBe(200);
    expect(await call('GET', '/admin', await as(creator))).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
  });

  it('requireApiKeyScope limits API keys only', async () => {
    const viaKey = { 'x-api-key': apiKey.token, 'x-user-id': creator.id };
    expect(await call('POST', '/resolve', viaKey)).toEqual({ status: 200, body: { via: 'api_key' } });
    expect(await call('POST', '/write', viaKey)).toEqual({
      status: 403,
      body: {
        code: 'INSUFFICIENT_SCOPE',
        message: 'API key lacks scope credentials:write',
        required: 'credentials:write',
      },
    });
    expect(await call('POST', '/write', await as(creator))).toEqual({ status: 200, body: { via: 'jwt' } });
  });

  it('flexibleAuth rejects session tokens unless the route accepts them', async () => {
    const { token } = await auth.issueSessionToken({
      endUserId: creator.id,
      email: creator.email,
      roles: creator.roles,
      tenantId: creator.tenantId,
      agentId,
      requestId: newRequestId(),
    });
    const session = { 'x-gateway-session-token': token, 'x-agent-id': agentId };
    expect(await call('POST', '/resolve', session)).toEqual({
      status: 403,
      body: {
        code: 'SESSION_TOKEN_NOT_ALLOWED',
        message: 'Session tokens are only accepted by the MCP and tool-gate endpoints',
      },
    });
    expect(await call('GET', '/mcp', session)).toEqual({ status: 200, body: { via: 'session_token' } });
    // Accepting session tokens does not narrow the other forms.
    expect(await call('GET', '/mcp', await as(creator))).toEqual({ status: 200, body: { via: 'jwt' } });
  });

  it('flexibleAuth answers 403 AGENT_ID_NOT_ALLOWED to a user JWT with X-Agent-Id, even where session tokens are accepted (MCP)', async () => {
    const borrowing = { ...(await as(creator)), 'x-agent-id': agentId };
    const refused = {
      status: 403,
      body: {
        code: 'AGENT_ID_NOT_ALLOWED',
        message:
          'X-Agent-Id needs an API key (X-Api-Key) or a session token (X-Gateway-Session-Token); a user JWT alone cannot act as an agent',
      },
    };
    expect(await call('GET', '/mcp', borrowing)).toEqual(refused);
    expect(await call('POST', '/resolve', borrowing)).toEqual(refused);
    expect(
      await call('GET', '/mcp', { 'x-api-key': apiKey.token, 'x-user-id': creator.id, 'x-agent-id': agentId }),
    ).toEqual({
      status: 200,
      body: { via: 'api_key' },
    });
  });

  it('fails closed when a guard runs without authentication', async () => {
    expect((await call('GET', '/unguarded')).status).toBe(401);
  });

  describe('the console cookie', () => {
    const cookie = async (user: typeof admin | typeof creator, name = CONSOLE_COOKIE) => ({
      cookie: `${name}=${await auth.signUserToken(user)}`,
    });
    const csrfRejected = {
      status: 403,
      body: { code: 'CSRF_REJECTED', message: expect.stringContaining('Sec-Fetch-Site') },
    };

    it('authenticates a GET as the user JWT it holds, on jwt and flexible routes', async () => {
      expect(await call('GET', '/me', await cookie(creator))).toEqual({
        status: 200,
        body: { userId: creator.id, via: 'jwt' },
      });
      expect(await call('POST', '/resolve', { ...(await cookie(creator)), 'sec-fetch-site': 'same-origin' })).toEqual({
        status: 200,
        body: { via: 'jwt' },
      });
      expect(await call('GET', '/me', { cookie: `${CONSOLE_COOKIE}=nope.nope.nope` })).toMatchObject({
        status: 401,
        body: { code: 'INVALID_TOKEN' },
      });
    });

    it('refuses a state-changing request without proof that it comes from the console origin (CSRF)', async () => {
      const c = await cookie(creator);
      expect(await call('POST', '/agents', c)).toEqual(csrfRejected);
      expect(await call('POST', '/agents', { ...c, 'sec-fetch-site': 'cross-site' })).toEqual(csrfRejected);
      // A sibling subdomain is same-site: SameSite lets the cookie through, this check does not.
      expect(await call('POST', '/agents', { ...c, 'sec-fetch-site': 'same-site' })).toEqual(csrfRejected);
      expect(await call('POST', '/agents', { ...c, origin: 'https://evil.example' })).toEqual(csrfRejected);
      expect(await call('POST', '/agents', { ...c, origin: 'null' })).toEqual(csrfRejected);
      // Fetch Metadata wins over Origin when both are sent.
      expect(
        await call('POST', '/agents', { ...c, 'sec-fetch-site': 'cross-site', origin: 'http://localhost' }),
      ).toEqual(csrfRejected);
      expect(await call('POST', '/agents', { ...c, 'sec-fetch-site': 'same-origin' })).toEqual({
        status: 200,
        body: { ok: true },
      });
      expect(await call('POST', '/agents', { ...c, origin: 'http://localhost' })).toEqual({
        status: 200,
        body: { ok: true },
      });
    });

    it('is never accepted by runtime endpoints (MCP, tool gate), and never as a runtime token', async () => {
      expect(await call('GET', '/mcp', await cookie(admin))).toMatchObject({ status: 401 });
      expect(
        await call('POST', '/resolve', {
          cookie: `${CONSOLE_COOKIE}=${runtimeToken.token}`,
          'sec-fetch-site': 'same-origin',
        }),
      ).toMatchObject({ status: 401 });
    });

    it('steps aside for explicit credentials: bearer clients work exactly as before', async () => {
      const both = { ...(await cookie(admin)), ...(await as(creator)) };
      expect(await call('POST', '/agents', both)).toEqual({ status: 200, body: { ok: true } });
      expect(await call('GET', '/me', both)).toEqual({ status: 200, body: { userId: creator.id, via: 'jwt' } });
      expect(
        await call('POST', '/resolve', {
          ...(await cookie(admin)),
          'x-api-key': apiKey.token,
          'x-user-id': creator.id,
        }),
      ).toEqual({ status: 200, body: { via: 'api_key' } });
    });

    it('over HTTPS takes only the __Host- cookie, which no sibling host can set', async () => {
      const https = { 'x-forwarded-proto': 'https' };
      expect(await call('GET', '/me', { ...https, ...(await cookie(creator)) })).toMatchObject({ status: 401 });
      expect(await call('GET', '/me', { ...https, ...(await cookie(creator, `__Host-${CONSOLE_COOKIE}`)) })).toEqual({
        status: 200,
        body: { userId: creator.id, via: 'jwt' },
      });
    });

    it('requestUserToken names the JWT that authenticated the request', async () => {
      const token = await auth.signUserToken(creator);
      expect(await call('GET', '/token', { cookie: `${CONSOLE_COOKIE}=${token}` })).toEqual({
        status: 200,
        body: { token },
      });
      expect(await call('GET', '/token', { authorization: `Bearer ${token}` })).toEqual({
        status: 200,
        body: { token },
      });
    });
  });
});
