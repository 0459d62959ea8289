import { connectRedis, isCluster, type RedisConnection, type RedisTarget } from './redis-target.js';

export interface RedisChannelsOptions {
  /** Publishes on it (shared with its owner, which closes it). */
  publisher: RedisConnection;
  onMessage(channel: string, message: string): void;
  onError(err: Error): void;
}

/**
 * Pub/sub on one Redis (PUBLISH/SUBSCRIBE) or on a cluster (SPUBLISH/SSUBSCRIBE, Redis 7 sharded
 * pub/sub: a channel lives on the shard of its slot, so channels spread over the primaries and a
 * message is not copied to every node over the cluster bus). Every subscriber of a channel hears
 * every message on it either way. Its subscriber connection opens with the first subscription
 * (or `connectSubscriber`).
 */
export class RedisChannels {
  private sub: RedisConnection | undefined;
  private readonly sharded: boolean;

  constructor(
    private readonly target: RedisTarget,
    private readonly options: RedisChannelsOptions,
  ) {
    this.sharded = isCluster(target);
  }

  async publish(channel: string, message: string): Promise<void> {
    if (this.sharded) await this.options.publisher.spublish(channel, message);
    else await this.options.publisher.publish(channel, message);
  }

  /** Subscribes once the subscriber connection is ready (see `ready`); resolves when Redis confirmed it. */
  async subscribe(channel: string): Promise<void> {
    const sub = this.subscriber();
    await ready(sub);
    if (this.sharded) await sub.ssubscribe(channel);
    else await sub.subscribe(channel);
  }

  async unsubscribe(channel: string): Promise<void> {
    if (!this.sub) return;
    if (this.sharded) await this.sub.sunsubscribe(channel);
    else await this.sub.unsubscribe(channel);
  }

  /** Drops the subscriber connection (nothing of its is worth waiting for; quit() would wait out a reconnect). */
  close(): void {
    this.sub?.disconnect();
    this.sub = undefined;
  }

  /** Opens the subscriber connection now rather than at the first subscription (the bus: its subscriptions come soon). */
  connectSubscriber(): void {
    this.subscriber();
  }

  private subscriber(): RedisConnection {
    if (this.sub) return this.sub;
    // ioredis reconnects and restores the subscriptions after an outage or a failover.
    const sub = connectRedis(this.target, {}, { shardedSubscribers: this.sharded });
    sub.on('error', (err: Error) => this.options.onError(err));
    sub.on(this.sharded ? 'smessage' : 'message', (channel: string, message: string) =>
      this.options.onMessage(channel, message),
    );
    this.sub = sub;
    return sub;
  }
}

/**
 * Resolves once the subscriber connection is ready. ioredis 5.8+ may write a SUBSCRIBE queued
 * before then ahead of its own handshake's INFO, which the server refuses in subscriber mode
 * ("Connection in subscriber mode, only subscriber commands may be used"): the connection errors
 * and reconnects, and a message published meanwhile reaches nobody (seen: a bridged answer lost
 * on a busy machine). On a cluster this waits for the slot map (its sharded subscriber
 * connections skip the INFO check). Rejects if the connection ends for good first.
 */
function ready(sub: RedisConnection): Promise<void> {
  if (sub.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const isReady = () => {
      sub.off('end', ended);
      resolve();
    };
    const ended = () => {
      sub.off('ready', isReady);
      reject(new Error('the Redis subscriber connection ended before it was ready'));
    };
    sub.once('ready', isReady);
    sub.once('end', ended);
  });
}
