import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { RateLimitedError } from '../errors.js';
import { CallQuota, callQuotaLimitsFrom, MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './index.js';

const redisUrl = process.env.TEST_REDIS_URL;

/** Two limiters on one store (two replicas), and a way to let a window pass. */
type Pair = { a: RateLimiter; b: RateLimiter; pass(ms: number): Promise<void> };
const stores: [string, () => Pair][] = [
  [
    'memory',
    () => {
      const clock = new ManualClock();
      const shared = new MemoryRateLimiter({ clock });
      return { a: shared, b: shared, pass: async (ms) => clock.advance(ms) };
    },
  ],
];
if (redisUrl) {
  stores.push([
    'redis',
    () => {
      const prefix = `test-${randomUUID()}`;
      return {
        a: new RedisRateLimiter({ url: redisUrl, prefix }),
        b: new RedisRateLimiter({ url: redisUrl, prefix }),
        pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      };
    },
  ]);
}

describe.each(stores)('CallQuota (%s)', (_name, make) => {
  const opened: Pair[] = [];
  const open = () => {
    const pair = make();
    opened.push(pair);
    return pair;
  };
  afterEach(async () => {
    for (const pair of opened.splice(0)) await Promise.all([...new Set([pair.a, pair.b])].map((l) => l.close()));
  });
  const refusal = (promise: Promise<void>) =>
    promise.then(
      () => null,
      (err: unknown) => err,
    );

  it('refuses the agent past its quota on any replica with a 429, Retry-After and the error body, then allows again after the window', async () => {
    const { a, b, pass } = open();
    const limits = { perAgent: 3, perTenant: 0, windowMs: 1_000 };
    const [one, two] = [new CallQuota(a, limits), new CallQuota(b, limits)];
    const agent = { agentId: randomUUID(), tenant: 't' };
    await one.take(agent);
    await two.take(agent);
    await one.take(agent);
    const err = await refusal(two.take(agent));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterSeconds: 1 });
    expect((err as RateLimitedError).toBody()).toEqual({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('agent'),
      retryAfter: 1,
    });
    expect((err as Error).message).toContain('agent');
    // Another agent has its own window.
    await one.take({ agentId: randomUUID(), tenant: 't' });
    await pass(1_100);
    await two.take(agent);
  });

  it('shares one tenant quota among all its agents and users, and leaves other tenants alone', async () => {
    const { a, b } = open();
    const limits = { perAgent: 100, perTenant: 2, windowMs: 60_000 };
    const [one, two] = [new CallQuota(a, limits), new CallQuota(b, limits)];
    const tenant = `tenant-${randomUUID()}`;
    await one.take({ agentId: randomUUID(), tenant });
    await two.take({ agentId: null, tenant });
    const err = await refusal(one.take({ agentId: randomUUID(), tenant }));
    expect(err).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect((err as RateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(59);
    expect((err as Error).message).toContain('tenant');
    await one.take({ agentId: randomUUID(), tenant: `tenant-${randomUUID()}` });
  });

  it('counts nothing when unlimited (0) or when there is no agent and no tenant', async () => {
    const { a } = open();
    const off = new CallQuota(
      a,
      callQuotaLimitsFrom({ RATE_LIMIT_AGENT: 0, RATE_LIMIT_TENANT: 0, RATE_LIMIT_WINDOW_MS: 60_000 }),
    );
    const agent = { agentId: randomUUID(), tenant: `tenant-${randomUUID()}` };
    for (let i = 0; i < 50; i++) await off.take(agent);
    const on = new CallQuota(a, { perAgent: 1, perTenant: 1, windowMs: 60_000 });
    for (let i = 0; i < 5; i++) await on.take({ agentId: null, tenant: null });
    await on.take(agent); // the 50 unlimited calls were not counted
  });
});
