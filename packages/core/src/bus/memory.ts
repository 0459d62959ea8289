import type { EventName, GatewayEvents } from '../events.js';
import type { Logger } from '../logger.js';
import type { EventBus, EventHandler, Unsubscribe } from './event-bus.js';
import { Subscribers } from './subscribers.js';

/**
 * In-process bus for the all-in-one. Handlers are called before `publish` resolves, so a cache
 * invalidated by an event is already clean when the request that changed the data answers.
 * Payloads go through JSON like on Redis, so both adapters hand out the same shapes.
 */
export class MemoryEventBus implements EventBus {
  private readonly subscribers: Subscribers;

  constructor(options: { logger?: Logger } = {}) {
    this.subscribers = new Subscribers(options.logger);
  }

  async publish<E extends EventName>(event: E, payload: GatewayEvents[E]): Promise<void> {
    this.subscribers.deliver(event, JSON.stringify(payload));
  }

  async subscribe<E extends EventName>(event: E, handler: EventHandler<E>): Promise<Unsubscribe> {
    const subscription = this.subscribers.add(event, handler as (payload: unknown) => void | Promise<void>);
    return async () => {
      subscription.remove();
    };
  }

  async close(): Promise<void> {
    this.subscribers.clear();
  }
}
