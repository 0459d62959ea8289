import { randomUUID } from 'node:crypto';
import { ManualClock } from '@agentgw/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHeldTaskStore, RedisHeldTaskStore, type HeldTaskEntry, type HeldTaskStore } from './held-task-store.js';

const redisUrl = process.env.TEST_REDIS_URL;
const connections: Redis[] = [];
afterAll(() => Promise.all(connections.map((r) => r.quit().catch(() => undefined))));

const entry = (clock: ManualClock, ttlMs: number): HeldTaskEntry => ({
  arguments: { table: 't' },
  route: { kind: 'proxied' },
  alwaysConfirm: false,
  mode: null,
  createdAt: clock.now().toISOString(),
  lastUpdatedAt: clock.now().toISOString(),
  expiresAt: clock.now().getTime() + ttlMs,
  outcome: null,
});

const stores: [string, (clock: ManualClock) => HeldTaskStore][] = [
  ['MemoryHeldTaskStore', (clock) => new MemoryHeldTaskStore(clock)],
];
if (redisUrl)
  stores.push([
    'RedisHeldTaskStore',
    (clock) => {
      const redis = new Redis(redisUrl);
      connections.push(redis);
      return new RedisHeldTaskStore(redis, clock);
    },
  ]);

describe.each(stores)('%s', (_name, make) => {
  it('keeps an entry until its task expires, and its end once replaced', async () => {
    const clock = new ManualClock(new Date());
    const store = make(clock);
    const id = randomUUID();
    const kept = entry(clock, 60_000);
    await store.put(id, kept);
    expect(await store.get(id)).toEqual(kept);
    const ended = { ...kept, outcome: { kind: 'completed' as const, result: { content: [] } } };
    await store.put(id, ended);
    expect(await store.get(id)).toEqual(ended);
    expect(await store.get(randomUUID())).toBeNull();
    clock.advance(60_001);
    expect(await store.get(id)).toBeNull();
  });
});
