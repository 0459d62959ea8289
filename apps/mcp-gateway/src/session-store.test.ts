import { randomUUID } from 'node:crypto';
import { connectRedis, ManualClock, type RedisConnection } from '@agentgw/core';
import { testClusterTarget } from '@agentgw/core/local-redis-cluster';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemorySessionStore } from './memory-session-store.js';
import { RedisSessionStore, SESSION_SCRIPTS } from './redis-session-store.js';
import type { SessionLimits, SessionStore } from './session-store.js';

const redisUrl = process.env.TEST_REDIS_URL;
const up = (sessionId: string) => ({ protocolVersion: '2025-11-25', sessionId });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One contract for both adapters; `make` gets a clock the store reads "now" from. */
function contract(name: string, make: (clock: ManualClock, limits?: Partial<SessionLimits>) => SessionStore) {
  describe(name, () => {
    it('creates, remembers upstream sessions per provider, ends once, and forgets', async () => {
      const store = make(new ManualClock());
      const sid = `t-${randomUUID()}`;
      expect(await store.get(sid)).toBeNull();
      expect(await store.create(sid, 'owner-1')).toEqual([]);
      expect(await store.get(sid)).toEqual({});
      await store.setUpstream(sid, 'p1', up('up-1'));
      expect(await store.get(sid)).toEqual({ p1: up('up-1') });
      expect(await store.end(sid)).toEqual({ p1: up('up-1') });
      expect(await store.get(sid)).toBeNull();
      expect(await store.end(sid)).toBeNull();
      // An ended session does not come back when a late call stores an upstream session.
      await store.setUpstream(sid, 'p2', { protocolVersion: '2026-07-28', sessionId: null });
      expect(await store.get(sid)).toBeNull();
      await store.close();
    });

    it('keeps at most maxPerOwner sessions per owner: the least recently used is evicted and handed back with its owner and upstreams', async () => {
      const clock = new ManualClock();
      const store = make(clock, { maxPerOwner: 3 });
      const owner = `alice-${randomUUID()}`;
      const other = `bob-${randomUUID()}`;
      const sids = Array.from({ length: 5 }, () => randomUUID());
      for (const sid of sids.slice(0, 3)) {
        expect(await store.create(sid, owner)).toEqual([]);
        if (sid === sids[0]) await store.setUpstream(sid, 'p1', up('up-a'));
        clock.advance(10);
      }
      expect(await store.create(`${other}-s`, other)).toEqual([]);
      // sids[1] is used: sids[0], then sids[2] are now the least recently used.
      expect(await store.get(sids[1]!)).toEqual({});
      clock.advance(10);
      expect(await store.create(sids[3]!, owner)).toEqual([{ sid: sids[0], owner, upstreams: { p1: up('up-a') } }]);
      expect(await store.get(sids[0]!)).toBeNull();
      clock.advance(10);
      expect((await store.create(sids[4]!, owner)).map((e) => e.sid)).toEqual([sids[2]]);
      for (const sid of [sids[1]!, sids[3]!, sids[4]!, `${other}-s`]) expect(await store.get(sid), sid).toEqual({});
      // An ended session frees its place.
      await store.end(sids[1]!);
      clock.advance(10);
      expect(await store.create(randomUUID(), owner)).toEqual([]);
      await store.close();
    });
  });
}

contract('MemorySessionStore', (clock, limits) => new MemorySessionStore(clock, limits));

describe('MemorySessionStore lifetime and global bound', () => {
  it('forgets a session idle for its TTL; every use starts the TTL again', async () => {
    const clock = new ManualClock();
    const store = new MemorySessionStore(clock, { idleTtlMs: 1_000 });
    await store.create('s', 'o');
    clock.advance(999);
    expect(await store.get('s')).toEqual({});
    clock.advance(999);
    expect(await store.get('s')).toEqual({});
    clock.advance(1_000);
    expect(await store.get('s')).toBeNull();
  });

  it("holds at most maxSessions in all: the oldest opened is evicted (expired ones first), with its own owner, not the creator's", async () => {
    const clock = new ManualClock();
    const store = new MemorySessionStore(clock, { maxSessions: 3, idleTtlMs: 1_000 });
    for (const sid of ['a', 'b', 'c']) await store.create(sid, `owner-${sid}`);
    await store.setUpstream('a', 'p', up('up-a'));
    expect(await store.create('d', 'owner-d')).toEqual([{ sid: 'a', owner: 'owner-a', upstreams: { p: up('up-a') } }]);
    expect(await store.get('a')).toBeNull();
    clock.advance(2_000);
    // b, c, d have expired: swept, nothing live evicted.
    expect(await store.create('e', 'e')).toEqual([]);
    expect(await store.get('e')).toEqual({});
  });
});

// The eviction script used to DEL victims' hashes and ZADD owner indexes it built from ARGV
// prefixes: undeclared keys, refused (or wrong) on Redis Cluster. Every call now names KEYS[1].
describe('RedisSessionStore scripts', () => {
  it('touch only the key declared in KEYS[1]', () => {
    for (const lua of SESSION_SCRIPTS) {
      const targets = [...lua.matchAll(/redis\.call\('[A-Z]+', ([^,)]+)/g)].map((m) => m[1]);
      expect(targets.length, lua).toBeGreaterThan(0);
      expect(new Set(targets), lua).toEqual(new Set(['KEYS[1]']));
    }
  });
});

if (redisUrl) {
  const connections: Redis[] = [];
  afterAll(() => Promise.all(connections.map((r) => r.quit().catch(() => undefined))));
  const redis = () => {
    const r = new Redis(redisUrl);
    connections.push(r);
    return r;
  };
  contract('RedisSessionStore', (clock, limits) => new RedisSessionStore(redis(), limits, clock));

  describe('RedisSessionStore lifetime', () => {
    it('forgets a session idle for its TTL (key expiry); every use starts the TTL again', async () => {
      const store = new RedisSessionStore(redis(), { idleTtlMs: 400 });
      const sid = randomUUID();
      await store.create(sid, `o-${sid}`);
      await sleep(250);
      expect(await store.get(sid)).toEqual({});
      await sleep(250);
      expect(await store.get(sid)).toEqual({});
      await sleep(600);
      expect(await store.get(sid)).toBeNull();
    });

    it('after a flush of the scripts (a restarted Redis), loads them again', async () => {
      const connection = redis();
      const store = new RedisSessionStore(connection);
      await connection.script('FLUSH');
      const sid = randomUUID();
      await store.create(sid, 'o');
      expect(await store.get(sid)).toEqual({});
      await store.end(sid);
    });
  });
} else it.skip('RedisSessionStore: the contract and lifetime against Redis (needs TEST_REDIS_URL)', () => undefined);

const cluster = testClusterTarget();
if (cluster) {
  const connections: RedisConnection[] = [];
  afterAll(() => Promise.all(connections.map((r) => r.quit().catch(() => undefined))));
  contract('RedisSessionStore on a Redis Cluster', (clock, limits) => {
    const connection = connectRedis(cluster);
    connections.push(connection);
    return new RedisSessionStore(connection, limits, clock);
  });
}
