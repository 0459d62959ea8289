import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock, MemoryEventBus, newId } from '@agentgw/core';
import type { ApiKeyScope, RoleName } from '@agentgw/db';
import { openTestDatabase, testBackends } from '@agentgw/db/testing';
import { API_KEY_USE_RECORD_INTERVAL_MS } from './credential-forms.js';
import { createAuth, type AuthService } from './service.js';
import { whereTenantVisible } from './tenancy.js';
import { testConfig } from './auth.fixtures.js';
import { generateApiKey, generateRuntimeToken } from './tokens.js';

const PARTNER_SECRET = 'partner-shared-secret-of-32-characters!!';

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (err: { status?: number; code?: string }) => `${err.status} ${err.code}`,
  );

describe.each(testBackends())('auth service (%s)', (backend) => {
  let handle: Awaited<ReturnType<typeof openTestDatabase>>;
  let auth: AuthService;
  const bus = new MemoryEventBus();
  const clock = new ManualClock(Date.now());

  const users = {
    admin: { id: newId(), email: 'admin@x.io', roles: ['admin'] as RoleName[], tenantId: null },
    alice: { id: newId(), email: 'alice@a.io', roles: ['agent_creator'] as RoleName[], tenantId: 'A' },
    bob: { id: newId(), email: 'bob@b.io', roles: ['tenant_admin'] as RoleName[], tenantId: 'B' },
    ann: { id: newId(), email: 'ann@a.io', roles: ['tenant_admin'] as RoleName[], tenantId: 'A' },
    // An admin who belongs to tenant A: the tenant check alone would let A's keys act for her.
    rootA: { id: newId(), email: 'root@a.io', roles: ['admin'] as RoleName[], tenantId: 'A' },
  };
  const agents = {
    a: { id: newId(), tenantId: 'A', token: generateRuntimeToken() },
    b: { id: newId(), tenantId: 'B', token: generateRuntimeToken() },
    global: { id: newId(), tenantId: null, token: generateRuntimeToken() },
  };
  const keys = {
    tenantA: {
      id: newId(),
      tenantId: 'A',
      scopes: ['credentials:resolve'] as ApiKeyScope[],
      key: generateApiKey(),
      creator: users.ann.id,
    },
    global: {
      id: newId(),
      tenantId: null,
      scopes: ['credentials:read'] as ApiKeyScope[],
      key: generateApiKey(),
      creator: users.admin.id,
    },
  };

  const db = () => handle.db;
  const headers = (h: Record<string, string>) => new Headers(h);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const loginToken = (user: (typeof users)[keyof typeof users]) => auth.signUserToken(user);
  const flexible = (h: Record<string, string>) => auth.authenticate(headers(h), 'flexible');
  const insertKey = async (creator: string | null, tenantId: string | null) => {
    const key = { id: newId(), key: generateApiKey() };
    await db()
      .insertInto('api_keys')
      .values({
        id: key.id,
        name: 'k',
        key_hash: key.key.hash,
        key_prefix: key.key.prefix,
        scopes: ['credentials:resolve'],
        user_id: creator,
        tenant_id: tenantId,
      })
      .execute();
    return key;
  };
  const insertUser = async (roles: RoleName[], tenantId: string | null) => {
    const id = newId();
    await db()
      .insertInto('users')
      .values({ id, email: `${id}@x.io`, roles, tenant_id: tenantId, password_hash: 'unused', name: null })
      .execute();
    return id;
  };

  beforeAll(async () => {
    handle = await openTestDatabase(backend);
    await db()
      .insertInto('users')
      .values(
        Object.values(users).map((u) => ({
          id: u.id,
          email: u.email,
          password_hash: 'unused',
          name: null,
          tenant_id: u.tenantId,
          roles: u.roles,
        })),
      )
      .execute();
    await db()
      .insertInto('agents')
      .values(
        Object.entries(agents).map(([name, a]) => ({
          id: a.id,
          name,
          description: null,
          upstream_url: 'http://127.0.0.1:9/',
          upstream_secret_enc: null,
          required_credentials: '[]',
          tenant_id: a.tenantId,
          owner_id: null,
          runtime_token_hash: a.token.hash,
          runtime_token_prefix: a.token.prefix,
        })),
      )
      .execute();
    await db()
      .insertInto('api_keys')
      .values(
        Object.entries(keys).map(([name, k]) => ({
          id: k.id,
          name,
          key_hash: k.key.hash,
          key_prefix: k.key.prefix,
          scopes: k.scopes,
          user_id: k.creator,
          tenant_id: k.tenantId,
        })),
      )
      .execute();
    const config = testConfig({
      JWT_EXPIRES_IN: '1h',
      JWT_EXTERNAL_ISSUERS: JSON.stringify([
        { issuer: 'https://partner.example', audience: 'gateway', secret: PARTNER_SECRET },
      ]),
    });
    auth = await createAuth({ config, db: db(), bus, clock });
  });

  afterAll(async () => {
    await auth?.close();
    await handle?.close();
  });

  describe('jwt mode', () => {
    it('refuses login tokens issued before a password change (TOKEN_REVOKED) and accepts ones signed after', async () => {
      const id = await insertUser(['agent_creator'], 'A');
      const user = { id, email: `${id}@x.io`, roles: ['agent_creator'] as RoleName[], tenantId: 'A' };
      const jwt = (token: string) => auth.authenticate(headers(bearer(token)), 'jwt');
      const before = await auth.signUserToken(user);
      expect((await jwt(before)).userId).toBe(id);
      await db().updateTable('users').set({ password_changed_at: clock.now() }).where('id', '=', id).execute();
      await bus.publish('user.changed', { userId: id });
      await expect(jwt(before)).rejects.toMatchObject({ status: 401, code: 'TOKEN_REVOKED' });
      const after = await auth.signUserToken(user);
      expect((await jwt(after)).userId).toBe(id);
    });

    it('accepts a login token and loads the user', async () => {
      const principal = await auth.authenticate(headers(bearer(await loginToken(users.alice))), 'jwt');
      expect(principal).toMatchObject({
        via: 'jwt',
        userId: users.alice.id,
        email: 'alice@a.io',
        roles: ['agent_creator'],
        tenantId: 'A',
        agentId: null,
        endUserId: users.alice.id,
        apiKey: null,
      });
      expect([...principal.permissions]).toContain('agent:create');
      expect(principal.permissions.has('user:manage')).toBe(false);
    });

    it('refuses missing, non-bearer and non-JWT credentials', async () => {
      expect(await rejection(auth.authenticate(headers({}), 'jwt'))).toBe('401 UNAUTHORIZED');
      expect(await rejection(auth.authenticate(headers({ authorization: 'Basic Zm9vOmJhcg==' }), 'jwt'))).toBe(
        '401 UNAUTHORIZED',
      );
      expect(await rejection(auth.authenticate(headers(bearer(agents.a.token.token)), 'jwt'))).toBe('401 UNAUTHORIZED');
      expect(
        await rejection(
          auth.authenticate(headers({ 'x-api-key': keys.global.key.token, 'x-user-id': users.admin.id }), 'jwt'),
        ),
      ).toBe('401 UNAUTHORIZED');
    });

    it('refuses an expired token', async () => {
      const token = await loginToken(users.alice);
      clock.advance(3601_000);
      expect(await rejection(auth.authenticate(headers(bearer(token)), 'jwt'))).toBe('401 TOKEN_EXPIRED');
    });

    it('refuses a token it verified (and kept) once the token has expired', async () => {
      const token = await loginToken(users.alice);
      const jwt = () => auth.authenticate(headers(bearer(token)), 'jwt');
      expect((await jwt()).userId).toBe(users.alice.id);
      // Verified again (and kept) 100 s before `exp`, well inside the cache's own lifetime.
      clock.advance(3_500_000);
      expect((await jwt()).userId).toBe(users.alice.id);
      clock.advance(101_000);
      expect(await rejection(jwt())).toBe('401 TOKEN_EXPIRED');
    });

    it('keeps what it verified per token type and audience: a service token stays refused for another callee', async () => {
      const token = await auth.signServiceToken('invoke-proxy', 'vault');
      expect(await auth.verifyServiceToken(token, 'vault')).toEqual({ service: 'invoke-proxy' });
      expect(await rejection(auth.verifyServiceToken(token, 'audit-writer'))).toBe('401 INVALID_TOKEN');
      expect(await rejection(auth.verifyConfirmationToken(token))).toBe('401 INVALID_TOKEN');
    });

    it('applies a role change on the next request, without a new login', async () => {
      const token = await loginToken(users.bob);
      expect((await auth.authenticate(headers(bearer(token)), 'jwt')).roles).toEqual(['tenant_admin']);
      await db()
        .updateTable('users')
        .set({ roles: ['agent_creator'] })
        .where('id', '=', users.bob.id)
        .execute();
      await bus.publish('user.changed', { userId: users.bob.id });
      const principal = await auth.authenticate(headers(bearer(token)), 'jwt');
      expect(principal.roles).toEqual(['agent_creator']);
      expect(principal.permissions.has('provider:create')).toBe(false);
      await db()
        .updateTable('users')
        .set({ roles: ['tenant_admin'] })
        .where('id', '=', users.bob.id)
        .execute();
      await bus.publish('user.changed', { userId: users.bob.id });
    });

    it('refuses a deleted user', async () => {
      const carol = { id: newId(), email: 'carol@a.io', roles: ['agent_creator'] as RoleName[], tenantId: 'A' };
      await db()
        .insertInto('users')
        .values({
          id: carol.id,
          email: carol.email,
          roles: carol.roles,
          tenant_id: 'A',
          password_hash: 'unused',
          name: null,
        })
        .execute();
      const token = await loginToken(carol);
      expect((await auth.authenticate(headers(bearer(token)), 'jwt')).userId).toBe(carol.id);
      await db().deleteFrom('users').where('id', '=', carol.id).execute();
      await bus.publish('user.changed', { userId: carol.id });
      expect(await rejection(auth.authenticate(headers(bearer(token)), 'jwt'))).toBe('401 UNAUTHORIZED');
    });

    it('never takes a session or service token as a login', async () => {
      const session = await auth.issueSessionToken({
        endUserId: users.alice.id,
        email: users.alice.email,
        roles: ['admin'],
        tenantId: 'A',
        agentId: agents.a.id,
        requestId: 'r1',
      });
      const service = await auth.signServiceToken('invoke-proxy', 'vault');
      for (const token of [session.token, service]) {
        expect(await rejection(auth.authenticate(headers(bearer(token)), 'jwt'))).toBe('401 INVALID_TOKEN');
        expect(await rejection(flexible(bearer(token)))).toBe('401 INVALID_TOKEN');
      }
    });
  });

  describe('external issuers', () => {
    const partnerToken = (sub: string, email?: string, emailVerified?: unknown) =>
      new SignJWT({ ...(email && { email }), ...(emailVerified !== undefined && { email_verified: emailVerified }) })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('https://partner.example')
        .setAudience('gateway')
        .setSubject(sub)
        .setIssuedAt(Math.floor(clock.now().getTime() / 1000))
        .setExpirationTime(Math.floor(clock.now().getTime() / 1000) + 300)
        .sign(new TextEncoder().encode(PARTNER_SECRET));

    const jwtAs = async (token: Promise<string>) => auth.authenticate(headers(bearer(await token)), 'jwt');

    it('links a verified email to the local user, then maps that (issuer, subject) without the email', async () => {
      const principal = await jwtAs(partnerToken('partner-42', 'Alice@A.io', true));
      expect(principal).toMatchObject({ userId: users.alice.id, roles: ['agent_creator'], tenantId: 'A' });
      const link = await db()
        .selectFrom('external_identities')
        .selectAll()
        .where('subject', '=', 'partner-42')
        .executeTakeFirstOrThrow();
      expect(link).toMatchObject({ issuer: 'https://partner.example', user_id: users.alice.id });
      expect(await jwtAs(partnerToken('partner-42'))).toMatchObject({ userId: users.alice.id });
    });

    it('does not link by an email the issuer did not verify', async () => {
      for (const verified of [undefined, false, 'true']) {
        const principal = await jwtAs(partnerToken(`partner-unverified-${String(verified)}`, 'bob@b.io', verified));
        expect(principal).toMatchObject({ roles: [], tenantId: null });
        expect(principal.userId).not.toBe(users.bob.id);
      }
    });

    it('never maps a subject that merely equals a local user id to that user', async () => {
      const principal = await jwtAs(partnerToken(users.admin.id));
      expect(principal.userId).toBe(`external:https://partner.example:${users.admin.id}`);
      expect(principal.roles).toEqual([]);
    });

    it('gives an unknown external user no roles, in the issuer namespace', async () => {
      const principal = await jwtAs(partnerToken('partner-7', 'new@partner.example', true));
      expect(principal).toMatchObject({
        via: 'jwt',
        userId: 'external:https://partner.example:partner-7',
        email: 'new@partner.example',
        roles: [],
        tenantId: null,
      });
      expect(principal.permissions.size).toBe(0);
    });
  });

  describe('flexible mode: API keys', () => {
    it('accepts an API key with X-User-Id', async () => {
      const principal = await flexible({ 'x-api-key': keys.tenantA.key.token, 'x-user-id': users.alice.id });
      expect(principal).toMatchObject({
        via: 'api_key',
        userId: users.alice.id,
        tenantId: 'A',
        roles: ['agent_creator'],
        apiKey: { id: keys.tenantA.id, scopes: ['credentials:resolve'] },
      });
    });

    it('accepts an API key with a user JWT', async () => {
      const principal = await flexible({
        'x-api-key': keys.tenantA.key.token,
        ...bearer(await loginToken(users.alice)),
      });
      expect(principal).toMatchObject({ via: 'api_key', userId: users.alice.id });
    });

    it('needs an acting user that exists and matches', async () => {
      expect(await rejection(flexible({ 'x-api-key': keys.tenantA.key.token }))).toBe('401 UNAUTHORIZED');
      expect(await rejection(flexible({ 'x-api-key': keys.tenantA.key.token, 'x-user-id': newId() }))).toBe(
        '401 UNAUTHORIZED',
      );
      expect(
        await rejection(
          flexible({
            'x-api-key': keys.tenantA.key.token,
            'x-user-id': users.admin.id,
            ...bearer(await loginToken(users.alice)),
          }),
        ),
      ).toBe('401 UNAUTHORIZED');
    });

    it("refuses a user outside the key's tenant; a global key serves any tenant", async () => {
      expect(await rejection(flexible({ 'x-api-key': keys.tenantA.key.token, 'x-user-id': users.bob.id }))).toBe(
        '403 TENANT_FORBIDDEN',
      );
      expect(
        await rejection(flexible({ 'x-api-key': keys.tenantA.key.token, ...bearer(await loginToken(users.bob)) })),
      ).toBe('403 TENANT_FORBIDDEN');
      expect((await flexible({ 'x-api-key': keys.global.key.token, 'x-user-id': users.bob.id })).tenantId).toBe('B');
    });

    it('refuses unknown, malformed and misplaced keys', async () => {
      expect(await rejection(flexible({ 'x-api-key': generateApiKey().token, 'x-user-id': users.alice.id }))).toBe(
        '401 INVALID_API_KEY',
      );
      expect(await rejection(flexible({ 'x-api-key': 'gk_short', 'x-user-id': users.alice.id }))).toBe(
        '401 INVALID_API_KEY',
      );
      expect(await rejection(flexible(bearer(keys.tenantA.key.token)))).toBe('401 UNAUTHORIZED');
    });

    it("refuses a tenant_admin's key acting for a user holding a role its creator lacks", async () => {
      expect(await rejection(flexible({ 'x-api-key': keys.tenantA.key.token, 'x-user-id': users.rootA.id }))).toBe(
        '403 KEY_CANNOT_ACT_FOR_USER',
      );
      expect(
        await rejection(flexible({ 'x-api-key': keys.tenantA.key.token, ...bearer(await loginToken(users.rootA)) })),
      ).toBe('403 KEY_CANNOT_ACT_FOR_USER');
      expect((await flexible({ 'x-api-key': keys.tenantA.key.token, 'x-user-id': users.ann.id })).roles).toEqual([
        'tenant_admin',
      ]);
    });

    it("lets an admin's key act for anyone, the tenant rule aside", async () => {
      for (const user of [users.admin, users.rootA, users.alice, users.bob]) {
        expect((await flexible({ 'x-api-key': keys.global.key.token, 'x-user-id': user.id })).roles).toEqual(
          user.roles,
        );
      }
    });

    it('refuses a key whose creator lost apikey:manage, left its tenant or is gone', async () => {
      const creator = await insertUser(['tenant_admin'], 'A');
      const key = await insertKey(creator, 'A');
      const use = () => flexible({ 'x-api-key': key.key.token, 'x-user-id': users.alice.id });
      expect((await use()).apiKey?.id).toBe(key.id);

      await db()
        .updateTable('users')
        .set({ roles: ['agent_creator'] })
        .where('id', '=', creator)
        .execute();
      await bus.publish('user.changed', { userId: creator });
      expect(await rejection(use())).toBe('401 INVALID_API_KEY');

      await db()
        .updateTable('users')
        .set({ roles: ['tenant_admin'], tenant_id: 'B' })
        .where('id', '=', creator)
        .execute();
      await bus.publish('user.changed', { userId: creator });
      expect(await rejection(use())).toBe('401 INVALID_API_KEY');

      await db().updateTable('users').set({ tenant_id: 'A' }).where('id', '=', creator).execute();
      await bus.publish('user.changed', { userId: creator });
      expect((await use()).apiKey?.id).toBe(key.id);

      await db().deleteFrom('users').where('id', '=', creator).execute();
      await bus.publish('user.changed', { userId: creator });
      expect(await rejection(use())).toBe('401 INVALID_API_KEY');
    });

    it("refuses a key with no recorded creator and a non-admin's global key", async () => {
      const orphan = await insertKey(null, null);
      expect(await rejection(flexible({ 'x-api-key': orphan.key.token, 'x-user-id': users.alice.id }))).toBe(
        '401 INVALID_API_KEY',
      );
      const globalOfTenantAdmin = await insertKey(await insertUser(['tenant_admin'], null), null);
      expect(
        await rejection(flexible({ 'x-api-key': globalOfTenantAdmin.key.token, 'x-user-id': users.alice.id })),
      ).toBe('401 INVALID_API_KEY');
    });

    it('refuses a key once revoked or deleted', async () => {
      const revocable = await insertKey(users.admin.id, null);
      const use = () => flexible({ 'x-api-key': revocable.key.token, 'x-user-id': users.alice.id });
      expect((await use()).apiKey?.id).toBe(revocable.id);
      await db().updateTable('api_keys').set({ revoked_at: clock.now() }).where('id', '=', revocable.id).execute();
      await bus.publish('apikey.changed', { keyId: revocable.id });
      expect(await rejection(use())).toBe('401 INVALID_API_KEY');
      await db().deleteFrom('api_keys').where('id', '=', revocable.id).execute();
      await bus.publish('apikey.changed', { keyId: revocable.id });
      expect(await rejection(use())).toBe('401 INVALID_API_KEY');
    });

    it("records a key's last use off the request path, at most once a minute", async () => {
      const key = await insertKey(users.admin.id, null);
      const lastUsedAt = async () =>
        (await db().selectFrom('api_keys').select('last_used_at').where('id', '=', key.id).executeTakeFirstOrThrow())
          .last_used_at;
      const use = () => flexible({ 'x-api-key': key.key.token, 'x-user-id': users.alice.id });
      const recorded = () =>
        vi.waitFor(async () => expect((await lastUsedAt())?.getTime()).toBe(clock.now().getTime()));

      await use();
      await recorded();
      const first = clock.now().getTime();

      // Within the minute: no second write, so the stored time stays the first use's.
      clock.advance(API_KEY_USE_RECORD_INTERVAL_MS / 2);
      await use();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await lastUsedAt())?.getTime()).toBe(first);

      clock.advance(API_KEY_USE_RECORD_INTERVAL_MS / 2);
      await use();
      await recorded();
    });

    it('checks X-Agent-Id: exists, same tenant, active', async () => {
      const base = { 'x-api-key': keys.tenantA.key.token, 'x-user-id': users.alice.id };
      expect((await flexible({ ...base, 'x-agent-id': agents.a.id })).agentId).toBe(agents.a.id);
      expect((await flexible({ ...base, 'x-agent-id': agents.global.id })).agentId).toBe(agents.global.id);
      expect(await rejection(flexible({ ...base, 'x-agent-id': agents.b.id }))).toBe('403 FORBIDDEN');
      expect(await rejection(flexible({ ...base, 'x-agent-id': newId() }))).toBe('401 UNAUTHORIZED');
    });

    it("refuses X-Agent-Id beside a user JWT alone (it would lend the agent's rules to any user), before any agent lookup", async () => {
      const jwt = bearer(await loginToken(users.alice));
      for (const agentId of [agents.a.id, agents.global.id, agents.b.id, newId()]) {
        const err = await flexible({ ...jwt, 'x-agent-id': agentId }).catch(
          (e: { status: number; code: string; message: string }) => e,
        );
        expect(err).toMatchObject({
          status: 403,
          code: 'AGENT_ID_NOT_ALLOWED',
          message: expect.stringContaining('X-Agent-Id needs an API key'),
        });
      }
      // The JWT is still checked first: a bad one stays 401, and without the header it works as before.
      expect(await rejection(flexible({ ...bearer('not.a.jwt'), 'x-agent-id': agents.a.id }))).toBe(
        '401 INVALID_TOKEN',
      );
      expect(await flexible(jwt)).toMatchObject({ via: 'jwt', userId: users.alice.id, agentId: null });
      // The API key form still names the agent, with the JWT as the user.
      expect(await flexible({ ...jwt, 'x-api-key': keys.tenantA.key.token, 'x-agent-id': agents.a.id })).toMatchObject({
        via: 'api_key',
        userId: users.alice.id,
        agentId: agents.a.id,
      });
    });
  });

  describe('flexible mode: runtime tokens and the kill switch', () => {
    it('accepts a runtime token as the agent', async () => {
      expect(await flexible(bearer(agents.a.token.token))).toEqual({
        via: 'runtime_token',
        userId: null,
        email: null,
        roles: [],
        tenantId: 'A',
        agentId: agents.a.id,
        endUserId: null,
        apiKey: null,
        permissions: new Set(),
      });
      expect(await rejection(flexible({ ...bearer(agents.a.token.token), 'x-agent-id': agents.b.id }))).toBe(
        '401 UNAUTHORIZED',
      );
      expect(await rejection(flexible(bearer(generateRuntimeToken().token)))).toBe('401 INVALID_TOKEN');
    });

    it('refuses a rotated runtime token at once', async () => {
      const old = agents.global.token;
      expect((await flexible(bearer(old.token))).agentId).toBe(agents.global.id);
      const fresh = generateRuntimeToken();
      await db()
        .updateTable('agents')
        .set({ runtime_token_hash: fresh.hash, runtime_token_prefix: fresh.prefix })
        .where('id', '=', agents.global.id)
        .execute();
      await bus.publish('agent.changed', { agentId: agents.global.id, change: 'token_rotated' });
      expect(await rejection(flexible(bearer(old.token)))).toBe('401 INVALID_TOKEN');
      expect((await flexible(bearer(fresh.token))).agentId).toBe(agents.global.id);
      agents.global.token = fresh;
    });

    it("answers 403 AGENT_DISABLED for every form once the agent is disabled (the cache is the catalog reader's: see its tests)", async () => {
      const session = await auth.issueSessionToken({
        endUserId: users.alice.id,
        email: users.alice.email,
        roles: users.alice.roles,
        tenantId: 'A',
        agentId: agents.a.id,
        requestId: 'r2',
      });
      const forms: Record<string, string>[] = [
        bearer(agents.a.token.token),
        { 'x-api-key': keys.tenantA.key.token, 'x-user-id': users.alice.id, 'x-agent-id': agents.a.id },
        { 'x-gateway-session-token': session.token, 'x-agent-id': agents.a.id },
      ];
      for (const form of forms) await flexible(form);
      await db().updateTable('agents').set({ is_active: false }).where('id', '=', agents.a.id).execute();
      await bus.publish('agent.changed', { agentId: agents.a.id, change: 'disabled' });
      for (const form of forms) expect(await rejection(flexible(form))).toBe('403 AGENT_DISABLED');
      await db().updateTable('agents').set({ is_active: true }).where('id', '=', agents.a.id).execute();
      await bus.publish('agent.changed', { agentId: agents.a.id, change: 'enabled' });
      for (const form of forms) expect((await flexible(form)).agentId).toBe(agents.a.id);
    });
  });

  describe('flexible mode: session tokens', () => {
    const issue = () =>
      auth.issueSessionToken({
        endUserId: users.alice.id,
        email: users.alice.email,
        roles: ['agent_creator'],
        tenantId: 'A',
        agentId: agents.a.id,
        requestId: 'req_1',
      });

    it('acts as the end user with X-Agent-Id or the runtime token', async () => {
      const { token, expiresIn } = await issue();
      expect(expiresIn).toBe(900);
      const expected = {
        via: 'session_token',
        userId: users.alice.id,
        endUserId: users.alice.id,
        email: users.alice.email,
        roles: ['agent_creator'],
        tenantId: 'A',
        agentId: agents.a.id,
        apiKey: null,
      };
      expect(await flexible({ 'x-gateway-session-token': token, 'x-agent-id': agents.a.id })).toMatchObject(expected);
      expect(await flexible({ 'x-gateway-session-token': token, ...bearer(agents.a.token.token) })).toMatchObject(
        expected,
      );
      expect(
        await flexible({
          'x-gateway-session-token': token,
          'x-agent-id': agents.a.id,
          'x-api-key': keys.tenantA.key.token,
        }),
      ).toMatchObject({ ...expected, apiKey: { id: keys.tenantA.id } });
    });

    it('refuses the wrong agent, no agent, or a user JWT beside it', async () => {
      const { token } = await issue();
      expect(await rejection(flexible({ 'x-gateway-session-token': token, 'x-agent-id': agents.b.id }))).toBe(
        '401 INVALID_TOKEN',
      );
      expect(await rejection(flexible({ 'x-gateway-session-token': token, ...bearer(agents.b.token.token) }))).toBe(
        '401 INVALID_TOKEN',
      );
      expect(await rejection(flexible({ 'x-gateway-session-token': token }))).toBe('401 UNAUTHORIZED');
      expect(
        await rejection(
          flexible({
            'x-gateway-session-token': token,
            'x-agent-id': agents.a.id,
            ...bearer(await loginToken(users.alice)),
          }),
        ),
      ).toBe('401 UNAUTHORIZED');
    });

    it('never lends admin-class roles: stripped when issued, and from tokens signed before that rule', async () => {
      const input = {
        endUserId: users.rootA.id,
        email: users.rootA.email,
        tenantId: 'A',
        agentId: agents.a.id,
        requestId: 'req_admin',
      };
      const issued = await auth.issueSessionToken({ ...input, roles: ['admin', 'tenant_admin', 'agent_creator'] });
      const principal = await flexible({ 'x-gateway-session-token': issued.token, 'x-agent-id': agents.a.id });
      expect(principal).toMatchObject({
        via: 'session_token',
        userId: users.rootA.id,
        roles: ['agent_creator'],
        tenantId: 'A',
      });
      expect(principal.permissions.has('provider:update')).toBe(false);
      // A token carrying `admin`, signed the old way straight with the gateway's key.
      const { endUserId, ...claims } = { ...input, roles: ['admin'] };
      const legacy = await new SignJWT({ ...claims, tt: 'session' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(endUserId)
        .setIssuer(testConfig().JWT_ISSUER)
        .setIssuedAt(Math.floor(clock.now().getTime() / 1000))
        .setExpirationTime(Math.floor(clock.now().getTime() / 1000) + 600)
        .sign(new TextEncoder().encode(testConfig().JWT_SECRET));
      expect(await flexible({ 'x-gateway-session-token': legacy, 'x-agent-id': agents.a.id })).toMatchObject({
        roles: [],
        tenantId: 'A',
      });
    });

    it('refuses a login token presented as a session token, and an expired one', async () => {
      const login = await loginToken(users.alice);
      expect(await rejection(flexible({ 'x-gateway-session-token': login, 'x-agent-id': agents.a.id }))).toBe(
        '401 INVALID_TOKEN',
      );
      const { token } = await issue();
      clock.advance(901_000);
      expect(await rejection(flexible({ 'x-gateway-session-token': token, 'x-agent-id': agents.a.id }))).toBe(
        '401 TOKEN_EXPIRED',
      );
    });
  });

  describe('service and confirmation tokens', () => {
    it('verifies a service token for its audience only', async () => {
      const token = await auth.signServiceToken('invoke-proxy', 'vault');
      expect(await auth.verifyServiceToken(token, 'vault')).toEqual({ service: 'invoke-proxy' });
      expect(await rejection(auth.verifyServiceToken(token, 'audit-writer'))).toBe('401 INVALID_TOKEN');
      clock.advance(61_000);
      expect(await rejection(auth.verifyServiceToken(token, 'vault'))).toBe('401 TOKEN_EXPIRED');
    });

    it('never takes a user or session token as a service token', async () => {
      const session = await auth.issueSessionToken({
        endUserId: users.alice.id,
        email: null,
        roles: [],
        tenantId: 'A',
        agentId: agents.a.id,
        requestId: 'r',
      });
      expect(await rejection(auth.verifyServiceToken(await loginToken(users.admin), 'vault'))).toBe(
        '401 INVALID_TOKEN',
      );
      expect(await rejection(auth.verifyServiceToken(session.token, 'vault'))).toBe('401 INVALID_TOKEN');
    });

    it('round-trips confirmation tokens and keeps them apart', async () => {
      const { token, expiresIn } = await auth.signConfirmationToken({ confirmationId: 'c1', userId: users.alice.id });
      expect(expiresIn).toBe(300);
      expect(await auth.verifyConfirmationToken(token)).toEqual({ confirmationId: 'c1', userId: users.alice.id });
      expect(await rejection(auth.verifyConfirmationToken(await loginToken(users.alice)))).toBe('401 INVALID_TOKEN');
      expect(await rejection(auth.authenticate(headers(bearer(token)), 'jwt'))).toBe('401 INVALID_TOKEN');
    });
  });

  describe('whereTenantVisible', () => {
    it('filters rows in the query', async () => {
      const visible = async (user: (typeof users)[keyof typeof users]) => {
        const principal = await auth.authenticate(headers(bearer(await loginToken(user))), 'jwt');
        const rows = await db()
          .selectFrom('agents')
          .select('agents.id')
          .where((eb) => whereTenantVisible(eb, principal, 'agents.tenant_id'))
          .execute();
        return rows.map((r) => r.id).sort();
      };
      expect(await visible(users.admin)).toEqual([agents.a.id, agents.b.id, agents.global.id].sort());
      expect(await visible(users.alice)).toEqual([agents.a.id, agents.global.id].sort());
      expect(await visible(users.bob)).toEqual([agents.b.id, agents.global.id].sort());
    });
  });
});
