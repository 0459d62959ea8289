import type * as Auth from '@agentgw/auth';
import { newId } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminApiService } from './service.js';
import { testClient } from './admin-api.fixtures.js';

// Counts every password check (one scrypt each) while keeping the real implementation.
const checks = vi.hoisted(() => ({ count: 0 }));
vi.mock('@agentgw/auth', async (importOriginal) => {
  const real = await importOriginal<typeof Auth>();
  return {
    ...real,
    verifyPasswordOrDummy: (...args: Parameters<typeof real.verifyPasswordOrDummy>) => {
      checks.count++;
      return real.verifyPasswordOrDummy(...args);
    },
  };
});

/** Requests as they arrive through the reverse proxy at 10.9.9.9, whose X-Forwarded-For is trusted. */
const PROXY = '10.9.9.9';
const viaProxy = (app: { request(path: string, init?: RequestInit, env?: unknown): Response | Promise<Response> }) => ({
  request: (path: string, init?: RequestInit) =>
    app.request(path, init, { incoming: { socket: { remoteAddress: PROXY } } }),
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
        body: {
          email: 'New.Person@Example.test',
          password: 'long-enough-1',
          name: 'New Person',
          roles: ['admin'],
          tenantId: 't1',
        },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        user: {
          id: expect.any(String),
          email: 'new.person@example.test',
          name: 'New Person',
          roles: ['agent_creator'],
          tenantId: null,
        },
      });
      expect(JSON.stringify(res.body)).not.toMatch(/password|hash/i);
      const row = await deps.db
        .selectFrom('users')
        .select(['roles', 'tenant_id', 'password_hash'])
        .where('id', '=', res.body.user.id)
        .executeTakeFirstOrThrow();
      expect(row.roles).toEqual(['agent_creator']);
      expect(row.tenant_id).toBeNull();
      expect(row.password_hash).not.toContain('long-enough-1');
    });

    it('refuses a taken email, whatever its case, with 409', async () => {
      await call('POST', '/api/v1/auth/register', {
        body: { email: 'taken@example.test', password: 'long-enough-1', name: 'A' },
      });
      const res = await call('POST', '/api/v1/auth/register', {
        body: { email: 'TAKEN@example.test', password: 'long-enough-2', name: 'B' },
      });
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
      const res = await call('POST', '/api/v1/auth/login', {
        body: { email: 'LOGIN@example.test', password },
        headers: { 'x-forwarded-for': '198.51.100.1' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        token: expect.any(String),
        user: { id: expect.any(String), email, name: 'Login', roles: ['agent_creator'], tenantId: null },
      });
      const agents = await call('GET', '/api/v1/admin/agents', { token: res.body.token });
      expect(agents.status).toBe(200);
    });

    it('answers wrong password and unknown email with the same 401', async () => {
      const wrong = await call('POST', '/api/v1/auth/login', {
        body: { email, password: 'wrong-password' },
        headers: { 'x-forwarded-for': '198.51.100.2' },
      });
      const unknown = await call('POST', '/api/v1/auth/login', {
        body: { email: 'nobody@example.test', password },
        headers: { 'x-forwarded-for': '198.51.100.2' },
      });
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
        const res = await call('POST', '/api/v1/auth/login', {
          body: { email: target, password: `wrong-${i}` },
          headers: { 'x-forwarded-for': `203.0.113.${i}` },
        });
        expect(res.status).toBe(401);
      }
      const refused = await call('POST', '/api/v1/auth/login', {
        body: { email: target, password },
        headers: { 'x-forwarded-for': '203.0.113.99' },
      });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'RATE_LIMITED' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('resets the account counter on a successful login', async () => {
      const target = 'resets@example.test';
      await call('POST', '/api/v1/auth/register', { body: { email: target, password, name: 'R' } });
      const attempt = (pw: string) =>
        call('POST', '/api/v1/auth/login', {
          body: { email: target, password: pw },
          headers: { 'x-forwarded-for': '203.0.114.1' },
        });
      for (let i = 0; i < 4; i++) expect((await attempt('wrong')).status).toBe(401);
      expect((await attempt(password)).status).toBe(200);
      for (let i = 0; i < 4; i++) expect((await attempt('wrong')).status).toBe(401);
      expect((await attempt(password)).status).toBe(200);
    });

    it('refuses a client address after 20 failures across accounts', async () => {
      for (let i = 0; i < 20; i++) {
        const res = await call('POST', '/api/v1/auth/login', {
          body: { email: `spray${i}@example.test`, password: 'guess' },
          headers: { 'x-forwarded-for': '203.0.115.5' },
        });
        expect(res.status).toBe(401);
      }
      const refused = await call('POST', '/api/v1/auth/login', {
        body: { email, password },
        headers: { 'x-forwarded-for': '203.0.115.5' },
      });
      expect(refused.status).toBe(429);
      const elsewhere = await call('POST', '/api/v1/auth/login', {
        body: { email, password },
        headers: { 'x-forwarded-for': '203.0.115.6' },
      });
      expect(elsewhere.status).toBe(200);
    });

    it('lets 60 colleagues behind one address sign in (three times its failure budget): successes do not spend it', async () => {
      const office = '203.0.117.1';
      const hash = await (await import('@agentgw/auth')).hashPassword(password);
      // Three times the address's budget of 20 proves it (each login is a password check: 200 took minutes on busy CI).
      const colleagues = Array.from({ length: 60 }, (_, i) => ({ id: newId(), email: `colleague${i}@office.test` }));
      await deps.db
        .insertInto('users')
        .values(
          colleagues.map((u) => ({
            ...u,
            password_hash: hash,
            name: null,
            tenant_id: null,
            roles: ['agent_creator' as const],
          })),
        )
        .execute();
      const started = Date.now();
      const statuses: number[] = [];
      // Ten at a time, as a busy office would: never more in flight than the address limit.
      for (let i = 0; i < colleagues.length; i += 10) {
        const batch = colleagues.slice(i, i + 10);
        const answers = await Promise.all(
          batch.map((u) =>
            call('POST', '/api/v1/auth/login', {
              body: { email: u.email, password },
              headers: { 'x-forwarded-for': office },
            }),
          ),
        );
        statuses.push(...answers.map((a) => a.status));
      }
      const seconds = (Date.now() - started) / 1000;
      const ok = statuses.filter((s) => s === 200).length;
      console.log(
        `[login throttle] ${ok}/${colleagues.length} logins from one address succeeded in ${seconds.toFixed(1)} s (address limit 20 per 15 min)`,
      );
      expect(
        ok,
        `${ok}/${colleagues.length} logins from one address succeeded, ${statuses.filter((s) => s === 429).length} got 429`,
      ).toBe(colleagues.length);
      // All in one window of the address counter: this test's own 180 s timeout (below) is shorter than the window.
      expect(180_000).toBeLessThan(deps.config.LOGIN_WINDOW_MS);
      // The office's budget is untouched by all those successes: 20 failures still fit, the 21st does not.
      for (let i = 0; i < 20; i++) {
        expect(
          (
            await call('POST', '/api/v1/auth/login', {
              body: { email: `typo${i}@office.test`, password },
              headers: { 'x-forwarded-for': office },
            })
          ).status,
        ).toBe(401);
      }
      expect(
        (
          await call('POST', '/api/v1/auth/login', {
            body: { email, password },
            headers: { 'x-forwarded-for': office },
          })
        ).status,
      ).toBe(429);
    }, 180_000);

    it('lets at most 5 of 40 parallel wrong guesses on one account reach the password check', async () => {
      const target = 'guessed@example.test';
      await call('POST', '/api/v1/auth/register', { body: { email: target, password, name: 'G' } });
      checks.count = 0;
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          call('POST', '/api/v1/auth/login', {
            body: { email: target, password: `guess-${i}` },
            headers: { 'x-forwarded-for': `203.0.118.${i}` },
          }),
        ),
      );
      const count = (status: number) => answers.filter((a) => a.status === status).length;
      console.log(
        `[login throttle] 40 parallel guesses: ${checks.count} password checks, ${count(401)} x 401, ${count(429)} x 429`,
      );
      expect(checks.count, `password checks reached by 40 parallel guesses: ${checks.count}`).toBeLessThanOrEqual(5);
      expect(count(401)).toBe(checks.count);
      expect(count(429)).toBe(40 - checks.count);
    });

    it('a success between guesses from one address gives back only its own attempt: still 20 failures at most', async () => {
      const sprayer = '203.0.119.1';
      const guess = (i: number) =>
        call('POST', '/api/v1/auth/login', {
          body: { email: `victim${i}@example.test`, password: 'guess' },
          headers: { 'x-forwarded-for': sprayer },
        });
      for (let i = 0; i < 19; i++) expect((await guess(i)).status).toBe(401);
      expect(
        (
          await call('POST', '/api/v1/auth/login', {
            body: { email, password },
            headers: { 'x-forwarded-for': sprayer },
          })
        ).status,
      ).toBe(200);
      expect((await guess(19)).status).toBe(401);
      const refused = await guess(20);
      console.log(`[login throttle] spraying one address: 20 failures answered 401, the 21st ${refused.status}`);
      expect(refused.status).toBe(429);
    });

    it('does not believe X-Forwarded-For from a peer that is not a trusted proxy', async () => {
      const direct = testClient({
        request: (path: string, init?: RequestInit) =>
          host.request(path, init, { incoming: { socket: { remoteAddress: '203.0.116.1' } } }),
      });
      for (let i = 0; i < 20; i++) {
        const res = await direct('POST', '/api/v1/auth/login', {
          body: { email: `direct${i}@example.test`, password: 'guess' },
          headers: { 'x-forwarded-for': `198.18.0.${i}` },
        });
        expect(res.status).toBe(401);
      }
      // A fresh spoofed hop does not buy a fresh budget: the peer's counter is spent.
      const refused = await direct('POST', '/api/v1/auth/login', {
        body: { email, password },
        headers: { 'x-forwarded-for': '198.18.1.1' },
      });
      expect(refused.status).toBe(429);
    });
  });

  describe('the console session (cookie)', () => {
    const email = 'console@example.test';
    const password = 'console-pass-1';
    const from = { 'x-forwarded-for': '198.51.100.60' };
    const sameOrigin = { ...from, 'sec-fetch-site': 'same-origin' };
    /** `name=value` of the Set-Cookie for the console cookie, and its attributes. */
    const consoleCookie = (headers: Headers) => {
      const line = headers.getSetCookie().find((c) => /^(__Host-)?agentgw_session=/.test(c)) ?? '';
      return {
        pair: line.split(';')[0] ?? '',
        attributes: line
          .split(';')
          .slice(1)
          .map((a) => a.trim()),
      };
    };
    const signIn = async (headers: Record<string, string> = sameOrigin) =>
      call('POST', '/api/v1/auth/login', { body: { email, password, session: 'cookie' }, headers });

    beforeAll(async () => {
      expect(
        (await call('POST', '/api/v1/auth/register', { body: { email, password, name: 'Console' }, headers: from }))
          .status,
      ).toBe(201);
    });

    it('sets an httpOnly SameSite=Strict cookie and leaves the token out of the body', async () => {
      const res = await signIn();
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        user: { id: expect.any(String), email, name: 'Console', roles: ['agent_creator'], tenantId: null },
      });
      const { pair, attributes } = consoleCookie(res.headers);
      expect(pair).toMatch(/^agentgw_session=ey[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(attributes).toEqual(expect.arrayContaining(['Max-Age=86400', 'Path=/', 'HttpOnly', 'SameSite=Strict']));
      expect(attributes).not.toContain('Secure');
      // The cookie authenticates reads, and the console restores its session with it.
      expect(await call('GET', '/api/v1/notifications/devices', { headers: { cookie: pair } })).toMatchObject({
        status: 200,
        body: { devices: [] },
      });
      expect(await call('GET', '/api/v1/auth/session', { headers: { cookie: pair } })).toMatchObject({
        status: 200,
        body: { user: res.body.user },
      });
    });

    it('over HTTPS (a proxy saying so) names the cookie __Host- and makes it Secure', async () => {
      const res = await signIn({ ...sameOrigin, 'x-forwarded-proto': 'https' });
      const { pair, attributes } = consoleCookie(res.headers);
      expect(pair).toMatch(/^__Host-agentgw_session=ey/);
      expect(attributes).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']));
      expect(attributes.some((a) => /^Domain=/i.test(a))).toBe(false);
    });

    it('refuses a cookie login from another origin (login CSRF) before checking the password', async () => {
      for (const headers of [
        from,
        { ...from, 'sec-fetch-site': 'cross-site' },
        { ...from, origin: 'https://evil.example' },
      ]) {
        const res = await signIn(headers);
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: 'CSRF_REJECTED' });
        expect(res.headers.getSetCookie()).toEqual([]);
      }
    });

    it('guards state-changing cookie requests: no same-origin proof or a cross-site Origin is 403, the console itself passes', async () => {
      const { pair } = consoleCookie((await signIn()).headers);
      const device = { platform: 'android', pushToken: `push-${Date.now()}` };
      const post = (headers: Record<string, string>) =>
        call('POST', '/api/v1/notifications/devices', { body: device, headers: { cookie: pair, ...headers } });
      expect(await post({})).toMatchObject({ status: 403, body: { code: 'CSRF_REJECTED' } });
      expect(await post({ origin: 'https://evil.example' })).toMatchObject({
        status: 403,
        body: { code: 'CSRF_REJECTED' },
      });
      expect(await post({ 'sec-fetch-site': 'same-site' })).toMatchObject({
        status: 403,
        body: { code: 'CSRF_REJECTED' },
      });
      expect((await post({ 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    });

    it('logout expires the cookie; it needs the same-origin proof when a cookie is sent', async () => {
      const { pair } = consoleCookie((await signIn()).headers);
      expect(await call('POST', '/api/v1/auth/logout', { headers: { cookie: pair } })).toMatchObject({
        status: 403,
        body: { code: 'CSRF_REJECTED' },
      });
      const res = await call('POST', '/api/v1/auth/logout', {
        headers: { cookie: pair, 'sec-fetch-site': 'same-origin' },
      });
      expect(res).toMatchObject({ status: 200, body: { success: true } });
      const cleared = res.headers.getSetCookie();
      expect(cleared).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^agentgw_session=;.*Max-Age=0/),
          expect.stringMatching(/^__Host-agentgw_session=;.*Max-Age=0/),
        ]),
      );
      expect((await call('POST', '/api/v1/auth/logout')).status).toBe(200);
    });

    it('leaves bearer clients as they were: the token in the body, no cookie', async () => {
      const res = await call('POST', '/api/v1/auth/login', { body: { email, password }, headers: from });
      expect(res.body).toEqual({ token: expect.any(String), user: expect.objectContaining({ email }) });
      expect(res.headers.getSetCookie()).toEqual([]);
      expect(await call('GET', '/api/v1/auth/session', { token: res.body.token })).toMatchObject({
        status: 200,
        body: { user: { email } },
      });
      expect((await call('GET', '/api/v1/auth/session')).status).toBe(401);
      expect(
        await call('POST', '/api/v1/auth/login', { body: { email, password, session: 'jar' }, headers: from }),
      ).toMatchObject({ status: 400, body: { field: 'session' } });
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
    const res = await call('POST', '/api/v1/auth/register', {
      body: { email: 'x@example.test', password: 'long-enough-1', name: 'X' },
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'REGISTRATION_DISABLED' });
  });
});
