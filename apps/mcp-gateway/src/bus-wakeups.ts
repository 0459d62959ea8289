import type { EventBus, EventName, GatewayEvents, Unsubscribe } from '@agentgw/core';

/** One waiter's watch of a key (a bridged request's id, a paused stream's token), taken before it reads the store so a change in between is not missed. */
export interface Watch {
  /** Resolves at the next wake since the previous call (at once when one came meanwhile), after `fallbackMs`, or when `signal` aborts. */
  next(fallbackMs: number, signal: AbortSignal): Promise<void>;
  /** Stops watching (releases a pending `next`). */
  close(): void;
}

/** A watch whose wake is latched: one that comes while nobody waits is kept for the next wait. */
class LatchedWatch implements Watch {
  private woken = false;
  private release: (() => void) | null = null;

  constructor(private readonly closed: (watch: LatchedWatch) => void) {}

  wake(): void {
    if (this.release) this.release();
    else this.woken = true;
  }

  next(fallbackMs: number, signal: AbortSignal): Promise<void> {
    if (this.woken || signal.aborted) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.release = null;
        resolve();
      };
      const timer = setTimeout(done, fallbackMs);
      this.release = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  close(): void {
    this.release?.();
    this.closed(this);
  }
}

/** This process's watches by key, woken by whoever learns the key changed. */
export class Wakeups {
  private readonly watches = new Map<string, Set<LatchedWatch>>();

  /** Watches `key` until the watch is closed. */
  watch(key: string): Watch {
    const watch = new LatchedWatch((closed) => {
      const set = this.watches.get(key);
      set?.delete(closed);
      if (set?.size === 0) this.watches.delete(key);
    });
    this.watches.set(key, (this.watches.get(key) ?? new Set()).add(watch));
    return watch;
  }

  /** Wakes every watch of `key`. */
  wake(key: string): void {
    for (const watch of this.watches.get(key) ?? []) watch.wake();
  }
}

/**
 * Watches woken by a bus event (a write on any replica): one subscription per instance, taken at
 * the first watch, for all of this process's watches. Pub/sub is at-most-once, so a waiter still
 * re-reads after its `fallbackMs`; when the bus cannot subscribe, that timer alone wakes it.
 */
export class BusWakeups<E extends EventName> {
  private readonly local = new Wakeups();
  private subscription: Promise<Unsubscribe | null> | null = null;

  constructor(
    private readonly bus: Pick<EventBus, 'subscribe'>,
    private readonly event: E,
    private readonly keyOf: (payload: GatewayEvents[E]) => string,
  ) {}

  /** Watches `key` once the subscription is up, so an event published after this resolves reaches it. */
  async watch(key: string): Promise<Watch> {
    const watch = this.local.watch(key);
    await (this.subscription ??= this.subscribe());
    return watch;
  }

  /** Ends the subscription (shutdown); later watches take none and wait on their timers. */
  async stop(): Promise<void> {
    const unsubscribe = await this.subscription;
    this.subscription = Promise.resolve(null);
    await unsubscribe?.();
  }

  private subscribe(): Promise<Unsubscribe | null> {
    return this.bus
      .subscribe(this.event, (payload) => this.local.wake(this.keyOf(payload)))
      .catch(() => {
        // The next watch tries again; until then the fallback timers wake the waiters.
        this.subscription = null;
        return null;
      });
  }
}
