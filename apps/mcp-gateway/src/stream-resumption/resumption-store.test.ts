import { randomBytes } from 'node:crypto';
import { systemClock } from '@agentgw/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryResumptionStore, RedisResumptionStore, type ResumptionStore } from './resumption-store.js';

/** Both stores: session-bound reads, bounds, and (Redis) a stream written by one replica read by another. */
const redisUrl = process.env.TEST_REDIS_URL;
const connections: Redis[] = [];
const redis = () => {
  const r = new Redis(redisUrl!);
  connections.push(r);
  return r;
};
afterAll(() => connections.forEach((r) => r.disconnect()));

const bounds = { maxEvents: 2, maxBytes: 1000, ttlMs: 60_000 };
const token = () => randomBytes(16).toString('base64url');
const idle = new AbortController().signal;

const stores: [string, () => [ResumptionStore, ResumptionStore]][] = [['memory', () => ((s) => [s, s])(new MemoryResumptionStore(systemClock, bounds))]];
if (redisUrl) stores.push(['redis', () => [new RedisResumptionStore(redis(), bounds), new RedisResumptionStore(redis(), bounds)]]);

describe.each(stores)('%s resumption store', (_name, make) => {
  it('keeps events for their session only; the writer and the reader may be two replicas', async () => {
    const [writer, reader] = make();
    const t = token();
    expect(await writer.open(t, 'session-a')).toBe(true);
    await writer.append(t, '{"n":1}', false);
    expect(await reader.read('session-a', t, 0)).toEqual({ events: [{ index: 1, data: '{"n":1}' }], done: false });
    expect(await reader.read('session-b', t, 0)).toBeNull();
    expect(await reader.read('session-a', token(), 0)).toBeNull();
    const waited = reader.changed(t, 20, idle);
    await writer.append(t, '{"id":1,"result":{}}', true);
    await waited;
    expect(await reader.read('session-a', t, 1)).toEqual({ events: [{ index: 2, data: '{"id":1,"result":{}}' }], done: true });
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
});
