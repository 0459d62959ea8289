import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminApiService } from './service.js';
import { testClient } from './test-client.js';

/** Requests as they arrive through the reverse proxy at 10.9.9.9, whose X-Forwarded-For is trusted. */
const PROXY = '10.9.9.9';
const viaProxy = (app: { request(path: string, init?: RequestInit, env?: unknown): Response | Promise<Response> }) => ({
  request: (path: string, init?: RequestInit) => app.request(path, init, { incoming: { socket: { remoteAddress: PROXY } } }),
});

describe.each(testBackends())('accounts (%s)', (backend) => {
  let deps: TestDeps;
  let call: ReturnType<typeof testClient>;
  let host: Parameters<typeof viaProxy>[0];

  beforeAll(async () => {
    deps = await createTestDeps({ backend, env: { TRUSTED_PROXIES: PROXY } });
    host = await testHost(adminApiService, deps);
    call = testClient(viaProxy(host));
  });
  afterAll(() => deps?.close());

  describe('POST /api/v1/auth/register', () => {
    it('creates an agent_creator with no tenant, ignoring roles and tenantId in the body', async () => {
      const res = await call('POST', '/api/v1/auth/register', {
        body: { email: 'New.Person@Example.test', password: 'long-enough-1', name: 'New Person', roles: ['admin'], tenantId: 't1' },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        user: { id: expect.any(String), email: 'new.person@example.test', name: 'New Person', roles: ['agent_creator'], tenantId: null },
      });
      expect(JSON.stringify(res.body)).not.toMatch(/password|hash/i);
      const row = await deps.db.selectFrom('users').select(['roles', 'tenant_id', 'password_hash']).where('id', '=', res.body.user.id).executeTakeFirstOrThrow();
      expect(row.roles).toEqual(['agent_creator']);
      expect(row.tenant_id).toBeNull();
      expect(row.password_hash).not.toContain('long-enough-1');
    });

    it('refuses a taken email, whatever its case, with 409', async () => {
      await call('POST', '/api/v1/auth/register', { body: { email: 'taken@example.test', password: 'long-enough-1', name: 'A' } });
      const res = await call('POST', '/api/v1/auth/register', { body: { email: 'TAKEN@example.test', password: 'long-enough-2', name: 'B' } });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'EMAIL_TAKEN' });
    });

    it.each([
      ['a short password', { email: 'x@example.test', password: 'short', name: 'X' }, 'password'],
      ['a bad email', { email: 'not-an-email', password: 'long-enough-1', name: 'X' }, 'email'],
      ['a missing name', { email: 'x@example.test', password: 'long-enough-1' }, 'name'],
      ['a wrongly typed password', { email: 'x@example.test', password: 12345678, name: 'X' }, 'password'],
    ])('answers 400 naming the field for %s', async (_label, body, field) => {
      const res = await call('POST', '/api/v1/auth/register', { body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
    });

    it('answers 400 for malformed JSON', async () => {
      const res = await call('POST', '/api/v1/auth/register', { rawBody: '{"email": ' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBeTypeOf('string');
    });
  });

  describe('POST /api/v1/auth/login', () => {
    const email = 'login@example.test';
    const password = 'correct-horse-1';

    beforeAll(async () => {
      const res = await call('POST', '/api/v1/auth/register', { body: { email, password, name: 'Login' } });
      expect(res.status).toBe(201);
    });

    it('returns a JWT and the user; the JWT authenticates admin-api calls', async () => {
      const res = await call('POST', '/api/v1/auth/login', { body: { email: 'LOGIN@example.test', password }, headers: { 'x-forwarded-for': '198.51.100.1' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        token: expect.any(String),
        user: { id: expect.any(String), email, name: 'Login', roles: ['agent_creator'], tenantId: null },
      });
      const agents = await call('GET', '/api/v1/admin/agents', { token: res.body.token });
      expect(agents.status).toBe(200);
    });

    it('answers wrong password and unknown email with the same 401', async () => {
      const wrong = await call('POST', '/api/v1/auth/login', { body: { email, password: 'wrong-password' }, headers: { 'x-forwarded-for': '198.51.100.2' } });
      const unknown = await call('POST', '/api/v1/auth/login', { body: { email: 'nobody@example.test', password }, headers: { 'x-forwarded-for': '198.51.100.2' } });
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      expect(wrong.body).toEqual(unknown.body);
      expect(wrong.body).toEqual({ code: 'INVALID_CREDENTIALS', message: 'Invalid email or password' });
    });

    it('answers 400 naming the field for a missing password', async () => {
      const res = await call('POST', '/api/v1/auth/login', { body: { email } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'password' });
    });

    it('refuses an account with 429 and Retry-After after 5 failures, even with the right password', async () => {
      const target = 'throttled@example.test';
      await call('POST', '/api/v1/auth/register', { body: { email: target, password, name: 'T' } });
      for (let i = 0; i < 5; i++) {
        const res = await call('POST', '/api/v1/auth/login', { body: { email: target, password: `wrong-${i}` }, headers: { 'x-forwarded-for': `203.0.113.${i}` } });
        expect(res.status).toBe(401);
      }
      const refused = await call('POST', '/api/v1/auth/login', { body: { email: target, password }, headers: { 'x-forwarded-for': '203.0.113.99' } });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'RATE_LIMITED' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('resets the account counter on a successful login', async () => {
      const target = 'resets@example.test';
      await call('POST', '/api/v1/auth/register', { body: { email: target, password, name: 'R' } });
      const attempt = (pw: string) => call('POST', '/api/v1/auth/login', { body: { email: target, password: pw }, headers: { 'x-forwarded-for': '203.0.114.1' } });
      for (let i = 0; i < 4; i++) expect((await attempt('wrong')).status).toBe(401);
      expect((await attempt(password)).status).toBe(200);
      for (let i = 0; i < 4; i++) expect((await attempt('wrong')).status).toBe(401);
      expect((await attempt(password)).status).toBe(200);
    });

    it('refuses a client address after 20 failures across accounts', async () => {
      for (let i = 0; i < 20; i++) {
        const res = await call('POST', '/api/v1/auth/login', { body: { email: `spray${i}@example.test`, password: 'guess' }, headers: { 'x-forwarded-for': '203.0.115.5' } });
        expect(res.status).toBe(401);
      }
      const refused = await call('POST', '/api/v1/auth/login', { body: { email, password }, headers: { 'x-forwarded-for': '203.0.115.5' } });
      expect(refused.status).toBe(429);
      const elsewhere = await call('POST', '/api/v1/auth/login', { body: { email, password }, headers: { 'x-forwarded-for': '203.0.115.6' } });
      expect(elsewhere.status).toBe(200);
    });

    it('does not believe X-Forwarded-For from a peer that is not a trusted proxy', async () => {
      const direct = testClient({
        request: (path: string, init?: RequestInit) => host.request(path, init, { incoming: { socket: { remoteAddress: '203.0.116.1' } } }),
      });
      for (let i = 0; i < 20; i++) {
        const res = await direct('POST', '/api/v1/auth/login', { body: { email: `direct${i}@example.test`, password: 'guess' }, headers: { 'x-forwarded-for': `198.18.0.${i}` } });
        expect(res.status).toBe(401);
      }
      // A fresh spoofed hop does not buy a fresh budget: the peer's counter is spent.
      const refused = await direct('POST', '/api/v1/auth/login', { body: { email, password }, headers: { 'x-forwarded-for': '198.18.1.1' } });
      expect(refused.status).toBe(429);
    });
  });
});

describe('self-registration disabled', () => {
  let deps: TestDeps;
  beforeAll(async () => {
    deps = await createTestDeps({ env: { ALLOW_SELF_REGISTRATION: 'false' } });
  });
  afterAll(() => deps?.close());

  it('answers 403 REGISTRATION_DISABLED', async () => {
    const call = testClient(await testHost(adminApiService, deps));
    const res = await call('POST', '/api/v1/auth/register', { body: { email: 'x@example.test', password: 'long-enough-1', name: 'X' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'REGISTRATION_DISABLED' });
  });
});
