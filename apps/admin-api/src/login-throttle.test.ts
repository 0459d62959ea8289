import { loadConfig, ManualClock, MemoryRateLimiter, RateLimitedError, RedisRateLimiter } from '@agentgw/core';
import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { Hono } from 'hono';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminApiService } from './service.js';
import {
  LoginThrottle,
  accountKey,
  addressKey,
  clientAddress,
  loginLimitsFrom,
  trustedProxies,
  type LoginLimits,
  type RegistrationLimits,
} from './login-throttle.js';
import { testClient } from './admin-api.fixtures.js';

const MINUTE = 60_000;

/** `times` login attempts (each counted before any password check). */
async function attempts(throttle: LoginThrottle, times: number, email: string, address: string): Promise<void> {
  for (let i = 0; i < times; i++) await throttle.attempt(email, address);
}

async function refusal(attempt: Promise<void>): Promise<RateLimitedError> {
  try {
    await attempt;
  } catch (err) {
    if (err instanceof RateLimitedError) return err;
    throw err;
  }
  throw new Error('expected a RateLimitedError');
}

/** The defaults of LOGIN_MAX_PER_ACCOUNT, LOGIN_MAX_PER_ADDRESS and LOGIN_WINDOW_MS. */
const DEFAULT_LIMITS: LoginLimits = loginLimitsFrom(
  loadConfig({ JWT_SECRET: 'x'.repeat(32), CREDENTIAL_ENCRYPTION_KEY: 'ab'.repeat(32) }),
);

const throttleOn = (clock: ManualClock, limits: Partial<LoginLimits> = {}, registration: RegistrationLimits = {}) =>
  new LoginThrottle(new MemoryRateLimiter({ clock }), { ...DEFAULT_LIMITS, ...limits }, registration);

describe('LoginThrottle', () => {
  it('refuses the 6th attempt on an account within the window and says when to retry', async () => {
    const clock = new ManualClock();
    const throttle = throttleOn(clock);
    await attempts(throttle, 5, 'a@example.test', '10.0.0.1');
    clock.advance(5 * MINUTE);
    const err = await refusal(throttle.attempt('A@Example.test', '10.0.0.2'));
    expect(err.status).toBe(429);
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.retryAfterSeconds).toBe(10 * 60);
    // Other accounts from another address are unaffected.
    await expect(throttle.attempt('b@example.test', '10.0.0.2')).resolves.toBeUndefined();
  });

  it('counts parallel attempts atomically: of 40 at once, exactly 5 pass', async () => {
    const throttle = throttleOn(new ManualClock());
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () => throttle.attempt('race@example.test', '10.0.0.1')),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
  });

  it('lets the account try again once the window has passed', async () => {
    const clock = new ManualClock();
    const throttle = throttleOn(clock);
    await attempts(throttle, 5, 'a@example.test', '10.0.0.1');
    clock.advance(15 * MINUTE - 1);
    await expect(throttle.attempt('a@example.test', '10.0.0.9')).rejects.toThrow(RateLimitedError);
    clock.advance(1);
    await expect(throttle.attempt('a@example.test', '10.0.0.9')).resolves.toBeUndefined();
  });

  it('on success resets the account counter and gives the attempt back to the address, so the address counts failures only', async () => {
    const throttle = throttleOn(new ManualClock(), { maxPerAddress: 7 });
    await attempts(throttle, 4, 'a@example.test', '10.0.0.1');
    await throttle.attempt('a@example.test', '10.0.0.1');
    await throttle.recordSuccess('a@example.test', '10.0.0.1');
    await attempts(throttle, 2, 'a@example.test', '10.0.0.1');
    // Account: 2 attempts since the success. Address: 6 failures (the success given back), the 7th passes, the 8th is refused.
    await expect(throttle.attempt('a@example.test', '10.0.0.2')).resolves.toBeUndefined();
    await expect(throttle.attempt('c@example.test', '10.0.0.1')).resolves.toBeUndefined();
    await expect(throttle.attempt('d@example.test', '10.0.0.1')).rejects.toThrow(RateLimitedError);
  });

  it('takes its limits and window from the options (LOGIN_* settings)', async () => {
    const clock = new ManualClock();
    const throttle = throttleOn(clock, { maxPerAccount: 2, maxPerAddress: 3, windowMs: MINUTE });
    await attempts(throttle, 2, 'a@example.test', '10.0.0.1');
    expect((await refusal(throttle.attempt('a@example.test', '10.0.0.2'))).retryAfterSeconds).toBe(60);
    await throttle.attempt('b@example.test', '10.0.0.1');
    await expect(throttle.attempt('c@example.test', '10.0.0.1')).rejects.toThrow(RateLimitedError);
    clock.advance(MINUTE);
    await expect(throttle.attempt('a@example.test', '10.0.0.1')).resolves.toBeUndefined();
  });

  it('refuses an address spraying many accounts after 20 attempts', async () => {
    const throttle = throttleOn(new ManualClock());
    for (let i = 0; i < 20; i++) await attempts(throttle, 1, `user${i}@example.test`, '192.0.2.7');
    await expect(throttle.attempt('fresh@example.test', '192.0.2.7')).rejects.toThrow(RateLimitedError);
    await expect(throttle.attempt('fresh@example.test', '192.0.2.8')).resolves.toBeUndefined();
  });

  it('throttles registrations per address', async () => {
    const throttle = throttleOn(new ManualClock(), {}, { maxRegistrationsPerAddress: 2 });
    await throttle.registration('192.0.2.1');
    await throttle.registration('192.0.2.1');
    expect((await refusal(throttle.registration('192.0.2.1'))).retryAfterSeconds).toBeGreaterThan(0);
    await expect(throttle.registration('192.0.2.2')).resolves.toBeUndefined();
  });
});

describe('clientAddress', () => {
  const addressOf = async (peer: string, xff: string | undefined, proxies: string[]) => {
    const app = new Hono();
    app.get('/', (c) => c.text(clientAddress(c, trustedProxies(proxies))));
    const res = await app.request(
      '/',
      { headers: xff ? { 'x-forwarded-for': xff } : {} },
      { incoming: { socket: { remoteAddress: peer } } },
    );
    return res.text();
  };

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy (no fresh budget by spoofing)', async () => {
    expect(await addressOf('203.0.113.9', '198.51.100.1', [])).toBe('203.0.113.9');
    expect(await addressOf('203.0.113.9', '198.51.100.1', ['10.0.0.0/8'])).toBe('203.0.113.9');
  });

  it('takes the first untrusted hop from the right when the peer is a trusted proxy', async () => {
    expect(await addressOf('10.0.0.2', '198.51.100.1', ['10.0.0.0/8'])).toBe('198.51.100.1');
    // The client prepended a fake hop; the proxy appended the real one.
    expect(await addressOf('10.0.0.2', '1.2.3.4, 198.51.100.1', ['10.0.0.0/8'])).toBe('198.51.100.1');
    expect(await addressOf('10.0.0.2', '198.51.100.1, 10.0.0.7', ['10.0.0.0/8'])).toBe('198.51.100.1');
    expect(await addressOf('::ffff:10.0.0.2', '198.51.100.1', ['10.0.0.0/8'])).toBe('198.51.100.1');
    expect(await addressOf('10.0.0.2', undefined, ['10.0.0.0/8'])).toBe('10.0.0.2');
  });
});

const redisUrl = process.env.TEST_REDIS_URL;

describe.skipIf(!redisUrl)('login throttle across replicas (Redis)', () => {
  // Two replicas: separate deps (database, limiter connection), one Redis under one prefix.
  const prefix = `test-${randomUUID()}`;
  const replicas: { deps: TestDeps; limiter: RedisRateLimiter; call: ReturnType<typeof testClient> }[] = [];
  const email = 'replicated@example.test';
  const password = 'correct-horse-1';
  const addresses = Array.from({ length: 6 }, (_, i) => `203.0.113.${200 + i}`);

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const deps = await createTestDeps();
      const limiter = new RedisRateLimiter({ url: redisUrl!, prefix });
      const call = testClient(await testHost(adminApiService, { ...deps, rateLimiter: limiter }));
      replicas.push({ deps, limiter, call });
      const registered = await call('POST', '/api/v1/auth/register', { body: { email, password, name: 'R' } });
      expect(registered.status).toBe(201);
    }
  });
  afterAll(async () => {
    const [first] = replicas;
    if (first)
      await Promise.all([accountKey(email), ...addresses.map(addressKey)].map((key) => first.limiter.reset(key)));
    for (const { deps, limiter } of replicas.splice(0)) {
      await limiter.close();
      await deps.close();
    }
  });

  it('counts failures on either replica towards one limit, and both refuse', async () => {
    const login = (replica: number, pw: string, address: string) =>
      replicas[replica]!.call('POST', '/api/v1/auth/login', {
        body: { email, password: pw },
        headers: { 'x-forwarded-for': address },
      });
    // 5 failures split 3/2: each replica alone saw fewer than 5.
    for (let i = 0; i < 5; i++) expect((await login(i % 2, `wrong-${i}`, addresses[i]!)).status).toBe(401);
    for (const replica of [0, 1]) {
      const refused = await login(replica, password, addresses[5]!);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'RATE_LIMITED' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });
});
