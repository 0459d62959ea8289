import {
  MemoryCache,
  type Clock,
  type EventBus,
  type EventName,
  type GatewayEvents,
  type Unsubscribe,
} from '@agentgw/core';

/**
 * A MemoryCache that serves only while it hears its invalidation event: before `listen()` and
 * after the returned unsubscribe, every read goes to the loader. A catalog that was never
 * started (admin-api's writes, a test) therefore never answers from a copy nobody invalidates.
 */
export class LiveCache<V> {
  private readonly cache: MemoryCache<V>;
  private listening = false;

  constructor(options: { ttlMs: number; max: number; clock: Clock }) {
    this.cache = new MemoryCache(options);
  }

  /** Starts caching; `keysOf` names the keys an event drops (null: all). */
  async listen<E extends EventName>(
    bus: EventBus,
    event: E,
    keysOf: (payload: GatewayEvents[E]) => string | string[] | null,
  ): Promise<Unsubscribe> {
    const unsubscribe = await this.cache.invalidateOn(bus, event, keysOf);
    this.listening = true;
    return async () => {
      this.listening = false;
      this.cache.clear();
      await unsubscribe();
    };
  }

  /** Whether reads are served from memory (between `listen()` and its unsubscribe). */
  get live(): boolean {
    return this.listening;
  }

  getOrLoad(key: string, loader: () => Promise<V>): Promise<V> {
    return this.listening ? this.cache.getOrLoad(key, loader) : loader();
  }
}
