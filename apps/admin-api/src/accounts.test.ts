import { MemoryRateLimiter, RateLimitedError } from '@agentgw/core';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import type * as Auth from '@agentgw/auth';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { login, register } from './accounts.js';
import { LoginThrottle, loginLimitsFrom } from './login-throttle.js';

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

describe('accounts under a throttle', () => {
  let deps: TestDeps;

  beforeAll(async () => {
    deps = await createTestDeps({ backend: 'pglite' });
  });
  afterAll(() => deps?.close());

  it('40 parallel wrong passwords: at most 5 reach the password check, the rest are 429 with a retry time', async () => {
    const throttle = new LoginThrottle(new MemoryRateLimiter(), loginLimitsFrom(deps.config));
    await register(
      deps,
      throttle,
      { email: 'owner@example.test', password: 'right-password-1', name: 'Owner' },
      '198.51.100.1',
    );
    checks.count = 0;
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        login(deps, throttle, { email: 'owner@example.test', password: `wrong-${i}` }, '203.0.113.7'),
      ),
    );
    expect(checks.count).toBeLessThanOrEqual(5);
    const refused = results.filter((r) => r.status === 'rejected' && r.reason instanceof RateLimitedError);
    expect(refused.length).toBeGreaterThanOrEqual(35);
    for (const r of refused) expect((r as PromiseRejectedResult).reason.retryAfterSeconds).toBeGreaterThan(0);
    expect(
      results.filter((r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'INVALID_CREDENTIALS'),
    ).toHaveLength(checks.count);
  });

  it('register is throttled per address before any password is hashed', async () => {
    const throttle = new LoginThrottle(new MemoryRateLimiter(), loginLimitsFrom(deps.config), {
      maxRegistrationsPerAddress: 2,
    });
    for (let i = 0; i < 2; i++) {
      await register(
        deps,
        throttle,
        { email: `r${i}@example.test`, password: 'a-password-1', name: 'R' },
        '192.0.2.50',
      );
    }
    await expect(
      register(deps, throttle, { email: 'r3@example.test', password: 'a-password-1', name: 'R' }, '192.0.2.50'),
    ).rejects.toBeInstanceOf(RateLimitedError);
    expect(
      await deps.db.selectFrom('users').select('id').where('email', '=', 'r3@example.test').executeTakeFirst(),
    ).toBeUndefined();
  });
});
