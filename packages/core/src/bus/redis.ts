import { Redis } from 'ioredis';
import type { EventName, GatewayEvents } from '../events.js';
import type { Logger } from '../logger.js';
import type { EventBus, EventHandler, Unsubscribe } from './event-bus.js';
import { Subscribers } from './subscribers.js';

export interface RedisEventBusOptions {
  url: string;
  /** Channels are `${prefix}:event:${event}` (default `agentgw`). */
  prefix?: string;
  logger?: Logger;
}

/**
 * Redis pub/sub: one connection publishes, one (in subscriber mode) listens. A channel is
 * subscribed on Redis while this process has at least one handler for it.
 */
export class RedisEventBus implements EventBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channelPrefix: string;
  private readonly subscribers: Subscribers;
  /** The pending or done SUBSCRIBE per channel, so a second handler waits for it too. */
  private readonly subscribed = new Map<string, Promise<unknown>>();

  constructor(options: RedisEventBusOptions) {
    this.channelPrefix = `${options.prefix ?? 'agentgw'}:event:`;
    this.subscribers = new Subscribers(options.logger);
    this.pub = new Redis(options.url);
    this.sub = new Redis(options.url);
    for (const [role, connection] of [
      ['publisher', this.pub],
      ['subscriber', this.sub],
    ] as const) {
      // Without a listener ioredis prints errors itself; reconnecting is automatic.
      connection.on('error', (err: Error) =>
        options.logger?.warn({ err: err.message, role }, 'redis event bus connection error'),
      );
    }
    this.sub.on('message', (channel: string, message: string) => this.subscribers.deliver(channel, message));
  }

  async publish<E extends EventName>(event: E, payload: GatewayEvents[E]): Promise<void> {
    await this.pub.publish(this.channelPrefix + event, JSON.stringify(payload));
  }

  async subscribe<E extends EventName>(event: E, handler: EventHandler<E>): Promise<Unsubscribe> {
    const channel = this.channelPrefix + event;
    const subscription = this.subscribers.add(channel, handler as (payload: unknown) => void | Promise<void>);
    if (subscription.first)
      this.subscribed.set(
        channel,
        this.subscriberReady().then(() => this.sub.subscribe(channel)),
      );
    try {
      await this.subscribed.get(channel);
    } catch (err) {
      if (subscription.remove().last) this.subscribed.delete(channel);
      throw err;
    }
    return async () => {
      await this.release(channel, subscription.remove());
    };
  }

  async close(): Promise<void> {
    this.subscribers.clear();
    this.subscribed.clear();
    // quit() lets pending commands finish; a connection that cannot quit (Redis gone) is dropped.
    await Promise.all([this.pub, this.sub].map((c) => c.quit().catch(() => c.disconnect())));
  }

  /**
   * Resolves once the subscriber connection is ready. ioredis 5.8+ may write a SUBSCRIBE queued
   * before then ahead of its own handshake's INFO, which the server refuses in subscriber mode
   * ("Connection in subscriber mode, only subscriber commands may be used"): the connection errors
   * and reconnects, and a message published meanwhile reaches nobody (seen: a bridged answer lost
   * on a busy machine). Rejects if the connection ends for good first.
   */
  private subscriberReady(): Promise<void> {
    if (this.sub.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const ready = () => {
        this.sub.off('end', ended);
        resolve();
      };
      const ended = () => {
        this.sub.off('ready', ready);
        reject(new Error('the Redis event bus connection ended before it was ready'));
      };
      this.sub.once('ready', ready);
      this.sub.once('end', ended);
    });
  }

  private async release(channel: string, { last }: { last: boolean }): Promise<void> {
    if (!last) return;
    this.subscribed.delete(channel);
    await this.sub.unsubscribe(channel);
  }
}
