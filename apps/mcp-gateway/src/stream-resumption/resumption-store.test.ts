import { randomBytes, randomUUID } from 'node:crypto';
import {
  connectRedis,
  RedisEventBus,
  systemClock,
  type EventBus,
  type RedisConnection,
  type RedisTarget,
} from '@agentgw/core';
import { testClusterTarget } from '@agentgw/core/local-redis-cluster';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryResumptionStore, RedisResumptionStore, type ResumptionStore } from './resumption-store.js';

/** Both stores: session-bound reads, bounds, waking on appends, and (Redis) a stream written by one replica read by another. */
const redisUrl = process.env.TEST_REDIS_URL;
const connections: RedisConnection[] = [];
const redis = (target: RedisTarget) => {
  const r = connectRedis(target);
  connections.push(r);
  return r;
};
const buses: EventBus[] = [];
const opened: ResumptionStore[] = [];
/** A replica's store: its own Redis connections and bus, the bus on the test's channel prefix. */
const redisStore = (target: RedisTarget, prefix: string) => {
  const bus = new RedisEventBus({ ...target, prefix });
  buses.push(bus);
  const store = new RedisResumptionStore(redis(target), bus, bounds);
  opened.push(store);
  return store;
};
afterAll(async () => {
  await Promise.all(opened.map((store) => store.stop()));
  await Promise.all(buses.map((bus) => bus.close()));
  connections.forEach((r) => r.disconnect());
});

const bounds = { maxEvents: 2, maxBytes: 1000, ttlMs: 60_000 };
const token = () => randomBytes(16).toString('base64url');
const idle = new AbortController().signal;
/** The bound of a test that waits to be woken: far below the minute a waiter goes without re-reading unless told. */
const WOKEN_WITHIN_MS = 10_000;

const stores: [string, () => [ResumptionStore, ResumptionStore]][] = [
  ['memory', () => ((s) => [s, s])(new MemoryResumptionStore(systemClock, bounds))],
];
const targets: [string, RedisTarget][] = [];
if (redisUrl) targets.push(['redis', { url: redisUrl }]);
const cluster = testClusterTarget();
if (cluster) targets.push(['redis-cluster', cluster]);
for (const [name, target] of targets)
  stores.push([
    name,
    () => ((prefix) => [redisStore(target, prefix), redisStore(target, prefix)])(`test-${randomUUID()}`),
  ]);

describe.each(stores)('%s resumption store', (_name, make) => {
  it('keeps events for their session only; the writer and the reader may be two replicas', async () => {
    const [writer, reader] = make();
    const t = token();
    expect(await writer.open(t, 'session-a')).toBe(true);
    await writer.append(t, '{"n":1}', false);
    expect(await reader.read('session-a', t, 0)).toEqual({ events: [{ index: 1, data: '{"n":1}' }], done: false });
    expect(await reader.read('session-b', t, 0)).toBeNull();
    expect(await reader.read('session-a', token(), 0)).toBeNull();
    await writer.append(t, '{"id":1,"result":{}}', true);
    expect(await reader.read('session-a', t, 1)).toEqual({
      events: [{ index: 2, data: '{"id":1,"result":{}}' }],
      done: true,
    });
  });

  it('drops notifications past the bounds but always keeps the final response', async () => {
    const [writer, reader] = make();
    const t = token();
    await writer.open(t, 'session-a');
    await writer.append(t, 'x'.repeat(600), false);
    await writer.append(t, 'y'.repeat(600), false);
    await writer.append(t, '"a"', false);
    await writer.append(t, '"b"', false);
    await writer.append(t, '"final"', true);
    await writer.append(t, '"after the end"', false);
    const read = await reader.read('session-a', t, 0);
    expect(read?.events.map((e) => e.data.slice(0, 7))).toEqual(['x'.repeat(7), '"a"', '"final"']);
    expect(read?.done).toBe(true);
  });

  it(
    "wakes a waiting reader at the writer's next append, long before its fallback read, and when its client leaves",
    async () => {
      const [writer, reader] = make();
      const t = token();
      await writer.open(t, 'session-a');
      const watch = await reader.watch(t);
      try {
        // An append between the reader's read and its wait is not missed.
        await writer.append(t, '{"n":1}', false);
        await watch.next(60_000, idle);
        const waited = watch.next(60_000, idle);
        await writer.append(t, '{"id":1,"result":{}}', true);
        await waited;
        expect(await reader.read('session-a', t, 0)).toEqual({
          events: [
            { index: 1, data: '{"n":1}' },
            { index: 2, data: '{"id":1,"result":{}}' },
          ],
          done: true,
        });
        const gone = new AbortController();
        const left = watch.next(60_000, gone.signal);
        gone.abort();
        await left;
      } finally {
        watch.close();
      }
    },
    WOKEN_WITHIN_MS,
  );
});
