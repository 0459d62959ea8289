import type { EventBus, Unsubscribe } from '../bus/event-bus.js';
import { epochMs, systemClock, type Clock } from '../clock.js';
import type { EventName, GatewayEvents } from '../events.js';
import { RecencyMap } from './recency-map.js';

export interface MemoryCacheOptions {
  /** How long an entry is served after it was stored. */
  ttlMs: number;
  /** Entries kept at most; the least recently used goes first (approximately: recency-map.ts). */
  max: number;
  clock?: Clock;
}

/**
 * The hot path's in-memory cache (agents, token hashes, providers, rules): TTL as a safety net,
 * events for freshness (`invalidateOn`). Keys are strings; values may be anything, null included.
 */
export class MemoryCache<V> {
  private readonly entries: RecencyMap<string, { value: V; expiresAt: number }>;
  private readonly loading = new Map<string, Promise<V>>();
  private readonly ttlMs: number;
  private readonly clock: Clock;

  constructor(options: MemoryCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.entries = new RecencyMap(options.max);
    this.clock = options.clock ?? systemClock;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    return this.lookup(key)?.value;
  }

  set(key: string, value: V): void {
    this.entries.set(key, { value, expiresAt: epochMs(this.clock) + this.ttlMs });
  }

  /** Also forgets a load in flight, so what it returns is not stored over the invalidation. */
  delete(key: string): void {
    this.entries.delete(key);
    this.loading.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.loading.clear();
  }

  /**
   * The cached value, or the loader's. Concurrent misses share one load; a loader that throws
   * stores nothing, and every waiter gets its error.
   */
  async getOrLoad(key: string, loader: () => Promise<V>): Promise<V> {
    const hit = this.lookup(key);
    if (hit) return hit.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const load = Promise.resolve().then(loader);
    this.loading.set(key, load);
    try {
      const value = await load;
      // Stored only if no delete/clear happened meanwhile: the loaded value may predate it.
      if (this.loading.get(key) === load) this.set(key, value);
      return value;
    } finally {
      if (this.loading.get(key) === load) this.loading.delete(key);
    }
  }

  /**
   * Drops entries when `event` is published: the keys `keysOf` names, or everything when it is
   * omitted or returns null.
   */
  invalidateOn<E extends EventName>(
    bus: EventBus,
    event: E,
    keysOf?: (payload: GatewayEvents[E]) => string | string[] | null,
  ): Promise<Unsubscribe> {
    return bus.subscribe(event, (payload) => {
      const keys = keysOf ? keysOf(payload) : null;
      if (keys === null) this.clear();
      else for (const key of Array.isArray(keys) ? keys : [keys]) this.delete(key);
    });
  }

  private lookup(key: string): { value: V } | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= epochMs(this.clock)) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
