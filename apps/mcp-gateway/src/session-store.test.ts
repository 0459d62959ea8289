import { ManualClock } from '@agentgw/core';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { MemorySessionStore, RedisSessionStore, type SessionStore } from './session-store.js';

const redisUrl = process.env.TEST_REDIS_URL;

function contract(name: string, make: () => { store: SessionStore; expire?: () => void }) {
  describe(name, () => {
    it('creates, remembers upstream sessions per provider, ends once, and forgets', async () => {
      const { store } = make();
      const sid = `t-${Math.random()}`;
      expect(await store.get(sid)).toBeNull();
      await store.create(sid);
      expect(await store.get(sid)).toEqual({});
      await store.setUpstream(sid, 'p1', { protocolVersion: '2025-11-25', sessionId: 'up-1' });
      expect(await store.get(sid)).toEqual({ p1: { protocolVersion: '2025-11-25', sessionId: 'up-1' } });
      expect(await store.end(sid)).toEqual({ p1: { protocolVersion: '2025-11-25', sessionId: 'up-1' } });
      expect(await store.get(sid)).toBeNull();
      // An ended session does not come back when a late call stores an upstream session.
      await store.setUpstream(sid, 'p2', { protocolVersion: '2026-07-28', sessionId: null });
      expect(await store.get(sid)).toBeNull();
      await store.close();
    });
  });
}

contract('MemorySessionStore', () => ({ store: new MemorySessionStore(new ManualClock()) }));

describe('MemorySessionStore expiry', () => {
  it('forgets an idle session after its lifetime', async () => {
    const clock = new ManualClock();
    const store = new MemorySessionStore(clock, 1_000);
    await store.create('s');
    clock.advance(999);
    expect(await store.get('s')).toEqual({});
    clock.advance(2);
    expect(await store.get('s')).toBeNull();
  });
});

if (redisUrl) contract('RedisSessionStore', () => ({ store: new RedisSessionStore(new Redis(redisUrl)) }));
else describe.skip('RedisSessionStore (set TEST_REDIS_URL)', () => it('skipped', () => undefined));
