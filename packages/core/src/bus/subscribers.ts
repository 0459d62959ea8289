import type { Logger } from '../logger.js';

type AnyHandler = (payload: unknown) => void | Promise<void>;

/**
 * The handlers registered in this process, per channel, shared by both bus adapters.
 * Each subscription is its own entry, so subscribing one function twice needs two unsubscribes.
 */
export class Subscribers {
  private readonly byChannel = new Map<string, Set<{ handler: AnyHandler }>>();

  constructor(private readonly logger?: Logger) {}

  /** Registers a handler; `first` tells whether the channel had no handler before. */
  add(channel: string, handler: AnyHandler): { first: boolean; remove: () => { last: boolean } } {
    let entries = this.byChannel.get(channel);
    const first = !entries;
    if (!entries) {
      entries = new Set();
      this.byChannel.set(channel, entries);
    }
    const entry = { handler };
    entries.add(entry);
    return {
      first,
      remove: () => {
        const current = this.byChannel.get(channel);
        // Already removed (double unsubscribe, or cleared by close): nothing left to release.
        if (!current?.delete(entry)) return { last: false };
        if (current.size > 0) return { last: false };
        this.byChannel.delete(channel);
        return { last: true };
      },
    };
  }

  /**
   * Hands every handler its own copy of the JSON payload. A handler that throws or rejects is
   * logged and does not stop the others; async handlers are not awaited.
   */
  deliver(channel: string, json: string): void {
    const entries = this.byChannel.get(channel);
    if (!entries) return;
    for (const { handler } of [...entries]) {
      try {
        const result = handler(JSON.parse(json));
        if (result instanceof Promise) result.catch((err: unknown) => this.failed(channel, err));
      } catch (err) {
        this.failed(channel, err);
      }
    }
  }

  clear(): void {
    this.byChannel.clear();
  }

  private failed(channel: string, err: unknown): void {
    this.logger?.error({ err, channel }, 'event handler failed');
  }
}
