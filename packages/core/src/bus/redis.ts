import type { EventName, GatewayEvents } from '../events.js';
import type { Logger } from '../logger.js';
import type { EventBus, EventHandler, Unsubscribe } from './event-bus.js';
import { RedisChannels } from '../redis/redis-channels.js';
import { connectRedis, type RedisConnection, type RedisTarget } from '../redis/redis-target.js';
import { Subscribers } from './subscribers.js';

export type RedisEventBusOptions = RedisTarget & {
  /** Channels are `${prefix}:event:${event}` (default `agentgw`). */
  prefix?: string;
  logger?: Logger;
};

/**
 * Redis pub/sub: one connection publishes, one (in subscriber mode) listens. A channel is
 * subscribed on Redis while this process has at least one handler for it. On a cluster each
 * event's channel is a sharded one (SPUBLISH/SSUBSCRIBE), so the events spread over the shards.
 */
export class RedisEventBus implements EventBus {
  private readonly pub: RedisConnection;
  private readonly channels: RedisChannels;
  private readonly channelPrefix: string;
  private readonly subscribers: Subscribers;
  /** The pending or done SUBSCRIBE per channel, so a second handler waits for it too. */
  private readonly subscribed = new Map<string, Promise<unknown>>();

  constructor(options: RedisEventBusOptions) {
    this.channelPrefix = `${options.prefix ?? 'agentgw'}:event:`;
    this.subscribers = new Subscribers(options.logger);
    this.pub = connectRedis(options);
    // Without a listener ioredis prints errors itself; reconnecting is automatic.
    const warn = (role: string) => (err: Error) =>
      options.logger?.warn({ err: err.message, role }, 'redis event bus connection error');
    this.pub.on('error', warn('publisher'));
    this.channels = new RedisChannels(options, {
      publisher: this.pub,
      onMessage: (channel, message) => this.subscribers.deliver(channel, message),
      onError: warn('subscriber'),
    });
    this.channels.connectSubscriber();
  }

  async publish<E extends EventName>(event: E, payload: GatewayEvents[E]): Promise<void> {
    await this.channels.publish(this.channelPrefix + event, JSON.stringify(payload));
  }

  async subscribe<E extends EventName>(event: E, handler: EventHandler<E>): Promise<Unsubscribe> {
    const channel = this.channelPrefix + event;
    const subscription = this.subscribers.add(channel, handler as (payload: unknown) => void | Promise<void>);
    if (subscription.first) this.subscribed.set(channel, this.channels.subscribe(channel));
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
    this.channels.close();
    await this.pub.quit().catch(() => this.pub.disconnect());
  }

  private async release(channel: string, { last }: { last: boolean }): Promise<void> {
    if (!last) return;
    this.subscribed.delete(channel);
    await this.channels.unsubscribe(channel);
  }
}
