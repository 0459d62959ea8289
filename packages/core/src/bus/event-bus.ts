import type { EventName, GatewayEvents } from '../events.js';

export type EventHandler<E extends EventName> = (payload: GatewayEvents[E]) => void | Promise<void>;
export type Unsubscribe = () => Promise<void>;

/**
 * Publish/subscribe of typed events, delivered to every subscriber in every process.
 * Fire-and-forget: a subscriber that is not connected when an event is published misses it
 * (use the JobQueue for work that must not be lost).
 */
export interface EventBus {
  publish<E extends EventName>(event: E, payload: GatewayEvents[E]): Promise<void>;
  subscribe<E extends EventName>(event: E, handler: EventHandler<E>): Promise<Unsubscribe>;
  close(): Promise<void>;
}
