import { randomUUID } from 'node:crypto';
import { connectRedis, ManualClock, type RedisConnection } from '@agentgw/core';
import { testClusterTarget } from '@agentgw/core/local-redis-cluster';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryRelayStore, RedisRelayStore, type RelayedRequest, type RelayStore } from './relay-store.js';

const redisUrl = process.env.TEST_REDIS_URL;
const entry = (owner: string, upstreamId: string | number = 1): RelayedRequest => ({
  owner,
  destination: 'upstream',
  providerId: 'p1',
  upstream: { protocolVersion: '2025-11-25', sessionId: 'up-1' },
  upstreamId,
  method: 'sampling/createMessage',
  auditId: null,
});

/** One contract for both adapters. */
function contract(name: string, make: (clock: ManualClock) => RelayStore) {
  describe(name, () => {
    it('hands a pending request back once, and only to its owner', async () => {
      const store = make(new ManualClock());
      const owner = `s:${randomUUID()}`;
      expect(await store.put('r1', entry(owner, 'srv-1'), 60_000, 4)).toBe(true);
      expect(await store.take(`s:${randomUUID()}`, 'r1')).toBeNull();
      expect(await store.take(owner, 'r1')).toEqual(entry(owner, 'srv-1'));
      expect(await store.take(owner, 'r1')).toBeNull();
      expect(await store.take(owner, 'never')).toBeNull();
    });

    it('keeps at most maxPerOwner pending per owner (others unaffected); expired ones free their place and are not handed back', async () => {
      const clock = new ManualClock();
      const store = make(clock);
      const owner = `s:${randomUUID()}`;
      const other = `s:${randomUUID()}`;
      expect(await store.put('a', entry(owner), 1_000, 2)).toBe(true);
      expect(await store.put('b', entry(owner), 1_000, 2)).toBe(true);
      expect(await store.put('c', entry(owner), 1_000, 2)).toBe(false);
      expect(await store.put('c', entry(other), 1_000, 2)).toBe(true);
      clock.advance(1_000);
      expect(await store.take(owner, 'a')).toBeNull();
      expect(await store.put('d', entry(owner), 1_000, 2)).toBe(true);
      expect(await store.take(owner, 'd')).toEqual(entry(owner));
    });

    it('keeps a bridged answer for the waiting call once, until it expires', async () => {
      const clock = new ManualClock();
      const store = make(clock);
      const id = `agentgw-relay-${randomUUID()}`;
      const answer = { jsonrpc: '2.0' as const, id, result: { action: 'accept', content: { name: 'Ada' } } };
      expect(await store.answerOf(id)).toBeNull();
      await store.settle(id, answer, 1_000);
      expect(await store.answerOf(id)).toEqual(answer);
      expect(await store.answerOf(id)).toBeNull();
      await store.settle(id, answer, 1_000);
      clock.advance(1_000);
      // The Redis key expires on Redis's own clock; the in-process one on the store's.
      if (store instanceof MemoryRelayStore) expect(await store.answerOf(id)).toBeNull();
    });
  });
}

contract('MemoryRelayStore', (clock) => new MemoryRelayStore(clock));

const redisConnections: RedisConnection[] = [];
afterAll(async () => {
  await Promise.all(redisConnections.map((r) => r.quit()));
});
const cluster = testClusterTarget();
if (cluster) {
  contract('RedisRelayStore on a Redis Cluster', (clock) => {
    const redis = connectRedis(cluster);
    redisConnections.push(redis);
    return new RedisRelayStore(redis, clock);
  });
}
if (redisUrl) {
  contract('RedisRelayStore', (clock) => {
    const redis = new Redis(redisUrl);
    redisConnections.push(redis);
    return new RedisRelayStore(redis, clock);
  });
}
