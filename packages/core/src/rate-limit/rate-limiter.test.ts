import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { DependencyUnavailableError } from '../errors.js';
import type { RedisTarget } from '../redis/redis-target.js';
import { testClusterTarget } from '../redis/local-redis-cluster.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './index.js';

const redisUrl = process.env.TEST_REDIS_URL;
/** One Redis and, when the global setup started one, a local Redis Cluster. */
const targets: [string, RedisTarget][] = [];
if (redisUrl) targets.push(['redis', { url: redisUrl }]);
const clusterTarget = testClusterTarget();
if (clusterTarget) targets.push(['redis-cluster', clusterTarget]);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A limiter and a way to let time pass for it: the manual clock for memory, real time for Redis. */
type Factory = () => { limiter: RateLimiter; pass(ms: number): Promise<void> };
const adapters: [string, Factory][] = [
  [
    'memory',
    () => {
      const clock = new ManualClock();
      return { limiter: new MemoryRateLimiter({ clock }), pass: async (ms) => clock.advance(ms) };
    },
  ],
];
for (const [name, target] of targets) {
  const prefix = `test-${randomUUID()}`;
  adapters.push([name, () => ({ limiter: new RedisRateLimiter({ ...target, prefix }), pass: sleep })]);
}

describe.each(adapters)('RateLimiter contract (%s)', (_name, make) => {
  const opened: RateLimiter[] = [];
  const used: string[] = [];
  const open = () => {
    const made = make();
    opened.push(made.limiter);
    return made;
  };
  /** A key no other test (or earlier run) has touched; reset after the test. */
  const freshKey = () => {
    const key = `k-${randomUUID()}`;
    used.push(key);
    return key;
  };
  afterEach(async () => {
    const [cleaner] = opened;
    if (cleaner) await Promise.all(used.splice(0).map((key) => cleaner.reset(key)));
    await Promise.all(opened.splice(0).map((l) => l.close()));
  });

  const minute = { limit: 3, windowMs: 60_000 };

  it('allows hits up to the limit, then refuses until the window ends', async () => {
    const { limiter } = open();
    const key = freshKey();
    const states = [];
    for (let i = 0; i < 4; i++) states.push(await limiter.hit(key, minute));
    expect(states.slice(0, 3)).toEqual([
      { allowed: true, remaining: 2, retryAfterSeconds: 0 },
      { allowed: true, remaining: 1, retryAfterSeconds: 0 },
      { allowed: true, remaining: 0, retryAfterSeconds: 0 },
    ]);
    expect(states[3]).toMatchObject({ allowed: false, remaining: 0 });
    expect(states[3]!.retryAfterSeconds).toBeGreaterThanOrEqual(59);
    expect(states[3]!.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it('peek reports whether the next hit would be allowed, without counting', async () => {
    const { limiter } = open();
    const key = freshKey();
    expect(await limiter.peek(key, minute)).toEqual({ allowed: true, remaining: 3, retryAfterSeconds: 0 });
    await limiter.hit(key, minute);
    await limiter.hit(key, minute);
    expect(await limiter.peek(key, minute)).toEqual({ allowed: true, remaining: 1, retryAfterSeconds: 0 });
    expect(await limiter.peek(key, minute)).toEqual({ allowed: true, remaining: 1, retryAfterSeconds: 0 });
    await limiter.hit(key, minute);
    const full = await limiter.peek(key, minute);
    expect(full).toMatchObject({ allowed: false, remaining: 0 });
    expect(full.retryAfterSeconds).toBeGreaterThan(0);
  });

  it('uses fixed windows: refused hits do not extend them, and a new one starts once it ends', async () => {
    const { limiter, pass } = open();
    const key = freshKey();
    const short = { limit: 1, windowMs: 300 };
    expect((await limiter.hit(key, short)).allowed).toBe(true);
    await pass(150);
    expect((await limiter.hit(key, short)).allowed).toBe(false);
    await pass(250);
    expect(await limiter.peek(key, short)).toEqual({ allowed: true, remaining: 1, retryAfterSeconds: 0 });
    expect(await limiter.hit(key, short)).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 0 });
  });

  it('reset forgets one key and leaves the others', async () => {
    const { limiter } = open();
    const [a, b] = [freshKey(), freshKey()];
    for (let i = 0; i < 3; i++) {
      await limiter.hit(a, minute);
      await limiter.hit(b, minute);
    }
    await limiter.reset(a);
    expect(await limiter.peek(a, minute)).toMatchObject({ allowed: true, remaining: 3 });
    expect(await limiter.peek(b, minute)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('giveBack takes one hit back within the window, never below zero, and keeps the window', async () => {
    const { limiter, pass } = open();
    const key = freshKey();
    const short = { limit: 2, windowMs: 400 };
    await limiter.giveBack(key);
    expect(await limiter.peek(key, short)).toEqual({ allowed: true, remaining: 2, retryAfterSeconds: 0 });
    await limiter.hit(key, short);
    await limiter.hit(key, short);
    expect((await limiter.peek(key, short)).allowed).toBe(false);
    await limiter.giveBack(key);
    expect(await limiter.peek(key, short)).toEqual({ allowed: true, remaining: 1, retryAfterSeconds: 0 });
    await Promise.all([limiter.giveBack(key), limiter.giveBack(key), limiter.giveBack(key)]);
    expect(await limiter.peek(key, short)).toMatchObject({ allowed: true, remaining: 2 });
    // The window started by the first hit still ends on time: after it, a fresh one.
    await limiter.hit(key, short);
    await limiter.hit(key, short);
    await limiter.hit(key, short);
    expect((await limiter.hit(key, short)).allowed).toBe(false);
    await pass(450);
    expect(await limiter.peek(key, short)).toEqual({ allowed: true, remaining: 2, retryAfterSeconds: 0 });
  });

  it('counts concurrent hits exactly', async () => {
    const { limiter } = open();
    const key = freshKey();
    const states = await Promise.all(
      Array.from({ length: 20 }, () => limiter.hit(key, { limit: 10, windowMs: 60_000 })),
    );
    expect(states.filter((s) => s.allowed)).toHaveLength(10);
  });
});

describe.each(targets)('RedisRateLimiter across processes (%s)', (_name, target) => {
  it('shares counters between limiters on the same prefix, and only those', async () => {
    const prefix = `test-${randomUUID()}`;
    const [first, second, other] = [prefix, prefix, `test-${randomUUID()}`].map(
      (p) => new RedisRateLimiter({ ...target, prefix: p }),
    );
    try {
      const rule = { limit: 2, windowMs: 60_000 };
      await first!.hit('shared', rule);
      await second!.hit('shared', rule);
      expect((await first!.peek('shared', rule)).allowed).toBe(false);
      expect((await second!.hit('shared', rule)).allowed).toBe(false);
      expect(await other!.peek('shared', rule)).toMatchObject({ allowed: true, remaining: 2 });
    } finally {
      await first!.reset('shared');
      await Promise.all([first, second, other].map((l) => l!.close()));
    }
  });
});

describe('RedisRateLimiter without Redis', () => {
  it('fails closed with a 503 instead of queueing commands', async () => {
    // A port that was just free: connections are refused.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const limiter = new RedisRateLimiter({ url: `redis://127.0.0.1:${port}` });
    try {
      const attempt = limiter.hit('k', { limit: 1, windowMs: 1000 });
      await expect(attempt).rejects.toBeInstanceOf(DependencyUnavailableError);
      await expect(attempt).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      await expect(limiter.peek('k', { limit: 1, windowMs: 1000 })).rejects.toBeInstanceOf(DependencyUnavailableError);
      await expect(limiter.giveBack('k')).rejects.toBeInstanceOf(DependencyUnavailableError);
    } finally {
      await limiter.close();
    }
  });
});
