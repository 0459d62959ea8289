import { describe, expect, it } from 'vitest';
import { MemoryEventBus } from '../bus/index.js';
import { ManualClock } from '../clock.js';
import { MemoryCache } from './index.js';

/** A loader whose calls are counted and whose promise the test settles. */
function deferredLoader<V>() {
  let calls = 0;
  let resolve!: (v: V) => void;
  let reject!: (e: unknown) => void;
  const loader = () => {
    calls += 1;
    return new Promise<V>((res, rej) => {
      resolve = res;
      reject = rej;
    });
  };
  return { loader, calls: () => calls, resolve: (v: V) => resolve(v), reject: (e: unknown) => reject(e) };
}

describe('MemoryCache', () => {
  it('serves a stored value until its ttl has passed', () => {
    const clock = new ManualClock();
    const cache = new MemoryCache<string>({ ttlMs: 1000, max: 10, clock });
    cache.set('a', 'A');
    clock.advance(999);
    expect(cache.get('a')).toBe('A');
    clock.advance(1);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used entry beyond max', () => {
    const cache = new MemoryCache<number>({ ttlMs: 60_000, max: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now more recent than b
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('deletes one key or clears all', () => {
    const cache = new MemoryCache<number>({ ttlMs: 60_000, max: 10 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBe(2);
    cache.clear();
    expect(cache.get('b')).toBeUndefined();
  });

  it('calls the loader once for concurrent misses, then serves the stored value', async () => {
    const cache = new MemoryCache<string>({ ttlMs: 60_000, max: 10 });
    const d = deferredLoader<string>();
    const waiting = Array.from({ length: 5 }, () => cache.getOrLoad('k', d.loader));
    await expect.poll(d.calls).toBe(1);
    d.resolve('loaded');
    expect(await Promise.all(waiting)).toEqual(Array(5).fill('loaded'));
    expect(await cache.getOrLoad('k', d.loader)).toBe('loaded');
    expect(d.calls()).toBe(1);
  });

  it('caches a null result (a known miss) like any value', async () => {
    const cache = new MemoryCache<string | null>({ ttlMs: 60_000, max: 10 });
    let calls = 0;
    const loader = async () => {
      calls += 1;
      return null;
    };
    expect(await cache.getOrLoad('missing', loader)).toBeNull();
    expect(await cache.getOrLoad('missing', loader)).toBeNull();
    expect(calls).toBe(1);
  });

  it('stores nothing when the loader throws, and every waiter gets the error', async () => {
    const cache = new MemoryCache<string>({ ttlMs: 60_000, max: 10 });
    const d = deferredLoader<string>();
    const first = cache.getOrLoad('k', d.loader);
    const second = cache.getOrLoad('k', d.loader);
    await expect.poll(d.calls).toBe(1);
    d.reject(new Error('db down'));
    await expect(first).rejects.toThrow('db down');
    await expect(second).rejects.toThrow('db down');
    expect(cache.get('k')).toBeUndefined();
    expect(await cache.getOrLoad('k', async () => 'retried')).toBe('retried');
    expect(d.calls()).toBe(1);
  });

  it('does not store a value whose load was in flight when the key was invalidated', async () => {
    const cache = new MemoryCache<string>({ ttlMs: 60_000, max: 10 });
    const stale = deferredLoader<string>();
    const pending = cache.getOrLoad('agent', stale.loader);
    await expect.poll(stale.calls).toBe(1);
    cache.delete('agent');
    // A request after the invalidation must not join the stale load.
    expect(await cache.getOrLoad('agent', async () => 'disabled')).toBe('disabled');
    stale.resolve('enabled');
    expect(await pending).toBe('enabled');
    expect(cache.get('agent')).toBe('disabled');
  });

  it('drops the keys an event names, or everything, when the event is published', async () => {
    const bus = new MemoryEventBus();
    const agents = new MemoryCache<string>({ ttlMs: 60_000, max: 10 });
    const providers = new MemoryCache<string>({ ttlMs: 60_000, max: 10 });
    await agents.invalidateOn(bus, 'agent.changed', (p) => p.agentId);
    const stop = await providers.invalidateOn(bus, 'providers.changed');
    agents.set('a1', 'one');
    agents.set('a2', 'two');
    providers.set('p1', 'x');
    providers.set('p2', 'y');

    // The in-process bus delivers before publish resolves: no window with a stale entry.
    await bus.publish('agent.changed', { agentId: 'a1', change: 'disabled' });
    expect(agents.get('a1')).toBeUndefined();
    expect(agents.get('a2')).toBe('two');

    await bus.publish('providers.changed', { providerId: 'p1' });
    expect(providers.size).toBe(0);

    await stop();
    providers.set('p3', 'z');
    await bus.publish('providers.changed', { providerId: null });
    expect(providers.get('p3')).toBe('z');
    await bus.close();
  });
});
