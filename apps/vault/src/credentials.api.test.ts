import { keyIdOf } from '@agentgw/auth';
import type { ApiKeyScope } from '@agentgw/db';
import { testBackends } from '@agentgw/db/testing';
import { describe, expect, it } from 'vitest';
import { KEY_A, partnerToken, sessionHeaders, useSharedVault, type VaultFixture } from './vault.fixtures.js';

const BASE = '/api/v1/credentials';
const inOneHour = (f: VaultFixture) => new Date(f.clock.now().getTime() + 3_600_000).toISOString();

describe.each(testBackends())('credentials API (%s)', (backend) => {
  const f = useSharedVault(backend);

  describe('authentication', () => {
    it('answers 401 with the error body without credentials', async () => {
      for (const [method, path] of [
        ['GET', BASE],
        ['POST', `${BASE}/resolve`],
        ['GET', `${BASE}/check/github`],
        ['GET', `${BASE}/oauth/github/auth`],
      ] as const) {
        const res = await f.call(method, path);
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ code: expect.any(String), message: expect.any(String) });
      }
    });

    it('refuses a bare runtime token: an agent is not a user', async () => {
      const agent = await f.agent();
      const res = await f.call('GET', BASE, { authorization: `Bearer ${agent.runtimeToken}` });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('USER_REQUIRED');
    });

    it('refuses a session token (403): the agent upstream holding it may not touch the user’s credentials', async () => {
      const user = await f.user();
      const stored = await f.call('POST', `${BASE}/apikey`, user.headers, {
        serviceType: 'github',
        apiKey: 'k-session',
      });
      const agent = await f.agent();
      const session = await sessionHeaders(f, user, agent.id);
      for (const [method, path, body] of [
        ['POST', `${BASE}/resolve`, { serviceTypes: ['github'] }],
        ['GET', BASE, undefined],
        ['POST', `${BASE}/apikey`, { serviceType: 'slack', apiKey: 'k' }],
        ['DELETE', `${BASE}/${(stored.body.credential as { id: string }).id}`, undefined],
      ] as const) {
        const res = await f.call(method, path, session, body);
        expect(res, `${method} ${path}`).toMatchObject({ status: 403, body: { code: 'SESSION_TOKEN_NOT_ALLOWED' } });
        expect(JSON.stringify(res.body)).not.toContain('k-session');
      }
      const left = await f.call('GET', BASE, user.headers);
      expect((left.body.credentials as { serviceType: string }[]).map((c) => c.serviceType)).toEqual(['github']);
    });
  });

  describe('store and list', () => {
    it('stores a JWT credential and shows only metadata', async () => {
      const user = await f.user();
      const expiresAt = inOneHour(f);
      const res = await f.call('POST', `${BASE}/jwt`, user.headers, {
        serviceType: 'github',
        token: 'eyJ.secret.jwt',
        expiresAt,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        credential: {
          id: expect.any(String),
          serviceType: 'github',
          kind: 'jwt',
          status: 'connected',
          expiresAt,
          createdAt: f.clock.now().toISOString(),
          updatedAt: f.clock.now().toISOString(),
        },
      });

      const list = await f.call('GET', BASE, user.headers);
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ credentials: [res.body.credential] });
      expect(JSON.stringify(list.body)).not.toContain('eyJ.secret.jwt');
    });

    it('stores an API key credential; a second store of the same service type replaces it', async () => {
      const user = await f.user();
      const first = await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'openai', apiKey: 'sk-one' });
      expect(first.status).toBe(201);
      expect(first.body.credential).toMatchObject({ serviceType: 'openai', kind: 'api_key', expiresAt: null });
      expect(JSON.stringify(first.body)).not.toContain('sk-one');

      f.clock.advance(60_000);
      const second = await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'openai', apiKey: 'sk-two' });
      expect(second.status).toBe(201);
      const credential = second.body.credential as Record<string, unknown>;
      expect(credential.id).toBe((first.body.credential as Record<string, unknown>).id);
      expect(credential.updatedAt).not.toBe(credential.createdAt);

      expect(((await f.call('GET', BASE, user.headers)).body.credentials as unknown[]).length).toBe(1);
      const resolved = await f.call('POST', `${BASE}/resolve`, user.headers, { serviceTypes: ['openai'] });
      expect(resolved.body.credentials).toEqual({ openai: 'sk-two' });
    });

    it('lists only the caller’s own credentials', async () => {
      const alice = await f.user();
      const bob = await f.user();
      await f.call('POST', `${BASE}/apikey`, alice.headers, { serviceType: 'github', apiKey: 'alice-key' });
      expect((await f.call('GET', BASE, bob.headers)).body).toEqual({ credentials: [] });
      const resolved = await f.call('POST', `${BASE}/resolve`, bob.headers, { serviceTypes: ['github'] });
      expect(resolved.body).toMatchObject({ credentials: {}, missing: ['github'] });
    });

    it('stores ciphertext, not the secret, bound to a nonce and the current key id', async () => {
      const user = await f.user();
      await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'github', apiKey: 'plain-secret-value' });
      const row = await f.deps.db
        .selectFrom('user_credentials')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      expect(row.ciphertext).not.toContain('plain-secret-value');
      expect(Buffer.from(row.ciphertext, 'base64url').toString('latin1')).not.toContain('plain-secret-value');
      expect(Buffer.from(row.nonce, 'base64url')).toHaveLength(12);
      expect(row.key_id).toBe(keyIdOf(Buffer.from(KEY_A, 'hex')));
      expect(row.tenant_id).toBeNull();
    });

    it.each([
      ['jwt', { serviceType: 'GitHub', token: 't', expiresAt: '2030-01-01T00:00:00Z' }, 'serviceType'],
      ['jwt', { serviceType: '1github', token: 't', expiresAt: '2030-01-01T00:00:00Z' }, 'serviceType'],
      ['jwt', { serviceType: 'github', expiresAt: '2030-01-01T00:00:00Z' }, 'token'],
      ['jwt', { serviceType: 'github', token: '', expiresAt: '2030-01-01T00:00:00Z' }, 'token'],
      ['jwt', { serviceType: 'github', token: 't' }, 'expiresAt'],
      ['jwt', { serviceType: 'github', token: 't', expiresAt: 'tomorrow' }, 'expiresAt'],
      ['jwt', { serviceType: 'github', token: 't', expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
      ['apikey', { serviceType: 'git-hub', apiKey: 'k' }, 'serviceType'],
      ['apikey', { serviceType: 'github', apiKey: 42 }, 'apiKey'],
      ['apikey', '{not json', '(body)'],
    ])('rejects an invalid %s body (%j) naming %s', async (kind, body, field) => {
      const user = await f.user();
      const res = await f.call('POST', `${BASE}/${kind}`, user.headers, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
    });

    it('refuses to store for an end user the gateway has no account for (403, nothing stored)', async () => {
      const ghost = { id: 'external-user-1', email: 'ghost@example.test' };
      const headers = { authorization: `Bearer ${await partnerToken(f, ghost.id, ghost.email)}` };
      const res = await f.call('POST', `${BASE}/apikey`, headers, { serviceType: 'github', apiKey: 'k' });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('USER_NOT_REGISTERED');
      expect(
        await f.deps.db.selectFrom('user_credentials').selectAll().where('user_id', '=', ghost.id).execute(),
      ).toEqual([]);
    });
  });

  describe('delete', () => {
    it('deletes an owned credential; another user’s or an unknown id is 404', async () => {
      const alice = await f.user();
      const bob = await f.user();
      const stored = await f.call('POST', `${BASE}/apikey`, alice.headers, { serviceType: 'github', apiKey: 'k' });
      const id = (stored.body.credential as { id: string }).id;

      const foreign = await f.call('DELETE', `${BASE}/${id}`, bob.headers);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('NOT_FOUND');
      expect((await f.call('GET', BASE, alice.headers)).body.credentials).toHaveLength(1);

      const own = await f.call('DELETE', `${BASE}/${id}`, alice.headers);
      expect(own).toEqual({ status: 200, body: { success: true } });
      expect((await f.call('GET', BASE, alice.headers)).body.credentials).toEqual([]);

      expect((await f.call('DELETE', `${BASE}/${id}`, alice.headers)).status).toBe(404);
      expect((await f.call('DELETE', `${BASE}/not-a-uuid`, alice.headers)).status).toBe(404);
    });
  });

  describe('resolve and check', () => {
    it('resolves stored values and reports the rest as missing with auth URLs', async () => {
      const user = await f.user();
      await f.call('POST', `${BASE}/jwt`, user.headers, {
        serviceType: 'github',
        token: 'jwt-value',
        expiresAt: inOneHour(f),
      });
      await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'openai', apiKey: 'sk-value' });
      const res = await f.call('POST', `${BASE}/resolve`, user.headers, {
        serviceTypes: ['github', 'openai', 'slack', 'slack'],
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        credentials: { github: 'jwt-value', openai: 'sk-value' },
        missing: ['slack'],
        authUrls: { slack: 'http://localhost:7521/credentials?serviceType=slack' },
      });
    });

    it('validates the resolve body', async () => {
      const user = await f.user();
      for (const body of [{}, { serviceTypes: 'github' }, { serviceTypes: ['Bad Type'] }]) {
        const res = await f.call('POST', `${BASE}/resolve`, user.headers, body);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('VALIDATION_ERROR');
      }
    });

    it('checks one service type: metadata when present, an auth URL when not', async () => {
      const user = await f.user();
      const stored = await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'github', apiKey: 'k' });
      expect(await f.call('GET', `${BASE}/check/github`, user.headers)).toEqual({
        status: 200,
        body: { hasCredential: true, credential: stored.body.credential },
      });
      expect(await f.call('GET', `${BASE}/check/slack`, user.headers)).toEqual({
        status: 200,
        body: { hasCredential: false, authUrl: 'http://localhost:7521/credentials?serviceType=slack' },
      });
      expect((await f.call('GET', `${BASE}/check/Not-Valid`, user.headers)).status).toBe(400);
    });

    it('treats an expired JWT credential as missing, with its auth URL', async () => {
      const user = await f.user();
      await f.provider({
        serviceType: 'github',
        authType: 'jwt',
        config: { connectUrl: 'https://github.example.com/connect' },
      });
      await f.call('POST', `${BASE}/jwt`, user.headers, {
        serviceType: 'github',
        token: 'jwt-value',
        expiresAt: inOneHour(f),
      });
      expect((await f.call('GET', `${BASE}/check/github`, user.headers)).body.hasCredential).toBe(true);

      f.clock.advance(3_600_000);
      const headers = { authorization: `Bearer ${await f.deps.auth.signUserToken(user)}` };
      expect(await f.call('POST', `${BASE}/resolve`, headers, { serviceTypes: ['github'] })).toEqual({
        status: 200,
        body: { credentials: {}, missing: ['github'], authUrls: { github: 'https://github.example.com/connect' } },
      });
      expect((await f.call('GET', `${BASE}/check/github`, headers)).body).toEqual({
        hasCredential: false,
        authUrl: 'https://github.example.com/connect',
      });
      // Still listed, so the user can see what to renew.
      expect((await f.call('GET', BASE, headers)).body.credentials).toHaveLength(1);
    });

    it('builds auth URLs from the tenant’s provider first, then the global one', async () => {
      await f.provider({
        serviceType: 'github',
        authType: 'jwt',
        config: { connectUrl: 'https://global.example.com/github' },
      });
      await f.provider({
        serviceType: 'github',
        authType: 'jwt',
        config: { connectUrl: 'https://acme.example.com/github' },
        tenantId: 'acme',
      });
      await f.provider({
        serviceType: 'google',
        authType: 'oauth2',
        config: { clientId: 'c', clientSecret: 's', scopes: [] },
      });
      await f.provider({
        serviceType: 'jira',
        authType: 'api_key',
        config: { connectUrl: 'https://other.example.com/jira' },
        tenantId: 'other',
      });

      const acme = await f.user({ tenantId: 'acme' });
      const res = await f.call('POST', `${BASE}/resolve`, acme.headers, { serviceTypes: ['github', 'google', 'jira'] });
      expect(res.body.authUrls).toEqual({
        github: 'https://acme.example.com/github',
        google: 'http://localhost:7521/api/v1/credentials/oauth/google/auth',
        jira: 'http://localhost:7521/credentials?serviceType=jira',
      });

      const globalUser = await f.user();
      const res2 = await f.call('POST', `${BASE}/resolve`, globalUser.headers, { serviceTypes: ['github'] });
      expect(res2.body.authUrls).toEqual({ github: 'https://global.example.com/github' });
    });

    it('stores the tenant of the acting user', async () => {
      const user = await f.user({ tenantId: 'acme' });
      await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'github', apiKey: 'k' });
      const row = await f.deps.db
        .selectFrom('user_credentials')
        .select('tenant_id')
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      expect(row.tenant_id).toBe('acme');
    });
  });

  describe('rows that do not decrypt', () => {
    async function storedRow(f: VaultFixture) {
      const user = await f.user();
      await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'github', apiKey: 'the-real-key' });
      const row = await f.deps.db
        .selectFrom('user_credentials')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      return { user, row };
    }

    function expectWarnedWithoutValue(f: VaultFixture) {
      const warnings = f.logs.filter((l) => l.level === 40);
      expect(warnings.length).toBeGreaterThan(0);
      expect(warnings[0]).toMatchObject({ msg: expect.stringContaining('cannot be decrypted'), reason: 'unauthentic' });
      expect(JSON.stringify(f.logs)).not.toContain('the-real-key');
    }

    it('a row copied to another user is missing for that user', async () => {
      const { row } = await storedRow(f);
      const mallory = await f.user();
      await f.deps.db
        .insertInto('user_credentials')
        .values({ ...row, id: crypto.randomUUID(), user_id: mallory.id, metadata: JSON.stringify(row.metadata) })
        .execute();
      const res = await f.call('POST', `${BASE}/resolve`, mallory.headers, { serviceTypes: ['github'] });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ credentials: {}, missing: ['github'] });
      expect((await f.call('GET', `${BASE}/check/github`, mallory.headers)).body.hasCredential).toBe(false);
      expectWarnedWithoutValue(f);
    });

    it('a row moved to another service type or kind is missing', async () => {
      const { user, row } = await storedRow(f);
      await f.deps.db
        .updateTable('user_credentials')
        .set({ service_type: 'gitlab' })
        .where('id', '=', row.id)
        .execute();
      const res = await f.call('POST', `${BASE}/resolve`, user.headers, { serviceTypes: ['gitlab'] });
      expect(res.body).toMatchObject({ credentials: {}, missing: ['gitlab'] });

      await f.deps.db
        .updateTable('user_credentials')
        .set({ service_type: 'github', kind: 'jwt' })
        .where('id', '=', row.id)
        .execute();
      expect(
        (await f.call('POST', `${BASE}/resolve`, user.headers, { serviceTypes: ['github'] })).body.missing,
      ).toEqual(['github']);
      expectWarnedWithoutValue(f);
    });

    it('a tampered ciphertext is missing, never garbled and never a 500', async () => {
      const { user, row } = await storedRow(f);
      const bytes = Buffer.from(row.ciphertext, 'base64url');
      bytes[0] = bytes[0]! ^ 0xff;
      await f.deps.db
        .updateTable('user_credentials')
        .set({ ciphertext: bytes.toString('base64url') })
        .where('id', '=', row.id)
        .execute();
      const res = await f.call('POST', `${BASE}/resolve`, user.headers, { serviceTypes: ['github'] });
      expect(res).toEqual({
        status: 200,
        body: {
          credentials: {},
          missing: ['github'],
          authUrls: { github: 'http://localhost:7521/credentials?serviceType=github' },
        },
      });
      expectWarnedWithoutValue(f);
    });
  });

  describe('API key scopes', () => {
    const cases: {
      name: string;
      scope: ApiKeyScope;
      request: (f: VaultFixture, userId: string) => Promise<{ status: number }>;
    }[] = [
      { name: 'list', scope: 'credentials:read', request: (f, u) => f.call('GET', BASE, { 'x-user-id': u }) },
      {
        name: 'store jwt',
        scope: 'credentials:write',
        request: (f, u) =>
          f.call(
            'POST',
            `${BASE}/jwt`,
            { 'x-user-id': u },
            { serviceType: 'svc', token: 't', expiresAt: inOneHour(f) },
          ),
      },
      {
        name: 'store apikey',
        scope: 'credentials:write',
        request: (f, u) => f.call('POST', `${BASE}/apikey`, { 'x-user-id': u }, { serviceType: 'svc', apiKey: 'k' }),
      },
      {
        name: 'resolve',
        scope: 'credentials:resolve',
        request: (f, u) => f.call('POST', `${BASE}/resolve`, { 'x-user-id': u }, { serviceTypes: ['svc'] }),
      },
      {
        name: 'check',
        scope: 'credentials:resolve',
        request: (f, u) => f.call('GET', `${BASE}/check/svc`, { 'x-user-id': u }),
      },
    ];

    it.each(cases)('$name needs $scope', async ({ scope, request }) => {
      const user = await f.user();
      const others = (['credentials:resolve', 'credentials:read', 'credentials:write'] as ApiKeyScope[]).filter(
        (s) => s !== scope,
      );
      const without = await f.apiKey({ scopes: others });
      const withScope = await f.apiKey({ scopes: [scope] });

      const refused = (await request(withHeader(f, without), user.id)) as {
        status: number;
        body: Record<string, unknown>;
      };
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('INSUFFICIENT_SCOPE');

      const allowed = await request(withHeader(f, withScope), user.id);
      expect([200, 201]).toContain(allowed.status);
    });

    it('delete needs credentials:write', async () => {
      const user = await f.user();
      const stored = await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'github', apiKey: 'k' });
      const id = (stored.body.credential as { id: string }).id;
      const readOnly = await f.apiKey({ scopes: ['credentials:read', 'credentials:resolve'] });
      const writer = await f.apiKey({ scopes: ['credentials:write'] });
      const refused = await f.call('DELETE', `${BASE}/${id}`, { 'x-api-key': readOnly, 'x-user-id': user.id });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('INSUFFICIENT_SCOPE');
      expect((await f.call('DELETE', `${BASE}/${id}`, { 'x-api-key': writer, 'x-user-id': user.id })).status).toBe(200);
    });

    it('an API key acts for X-User-Id: resolve returns that user’s credentials', async () => {
      const user = await f.user();
      await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'github', apiKey: 'users-key' });
      const key = await f.apiKey({ scopes: ['credentials:resolve'] });
      const res = await f.call(
        'POST',
        `${BASE}/resolve`,
        { 'x-api-key': key, 'x-user-id': user.id },
        { serviceTypes: ['github'] },
      );
      expect(res.body.credentials).toEqual({ github: 'users-key' });
    });

    it('an API key of one tenant cannot act for a user of another (403)', async () => {
      const user = await f.user({ tenantId: 'beta' });
      await f.call('POST', `${BASE}/apikey`, user.headers, { serviceType: 'github', apiKey: 'beta-key' });
      const key = await f.apiKey({
        scopes: ['credentials:resolve', 'credentials:read', 'credentials:write'],
        tenantId: 'alpha',
      });
      const res = await f.call(
        'POST',
        `${BASE}/resolve`,
        { 'x-api-key': key, 'x-user-id': user.id },
        { serviceTypes: ['github'] },
      );
      expect(res.status).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain('beta-key');
      expect((await f.call('GET', BASE, { 'x-api-key': key, 'x-user-id': user.id })).status).toBe(403);

      const sameTenantKey = await f.apiKey({ scopes: ['credentials:resolve'], tenantId: 'beta' });
      const ok = await f.call(
        'POST',
        `${BASE}/resolve`,
        { 'x-api-key': sameTenantKey, 'x-user-id': user.id },
        { serviceTypes: ['github'] },
      );
      expect(ok.body.credentials).toEqual({ github: 'beta-key' });
    });
  });

  describe('OAuth without an authorization server (the flow itself: oauth-connect.test.ts)', () => {
    it('GET oauth/:serviceType/auth answers 501 NOT_IMPLEMENTED when no provider names an authorization server', async () => {
      const user = await f.user();
      const res = await f.call('GET', `${BASE}/oauth/google/auth`, user.headers);
      expect(res.status).toBe(501);
      expect(res.body).toEqual({ code: 'NOT_IMPLEMENTED', message: expect.any(String) });
    });

    it('GET oauth/:serviceType/callback without a flow in progress answers 400 OAUTH_STATE_INVALID', async () => {
      const user = await f.user();
      const res = await f.call('GET', `${BASE}/oauth/google/callback?code=c&state=s`, user.headers);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 'OAUTH_STATE_INVALID', message: expect.any(String) });
    });
  });
});

/** The fixture's `call` with the API key header added to every request. */
function withHeader(f: VaultFixture, apiKey: string): VaultFixture {
  return {
    ...f,
    call: (method, path, headers = {}, body) => f.call(method, path, { ...headers, 'x-api-key': apiKey }, body),
  };
}
