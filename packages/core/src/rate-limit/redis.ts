import { DependencyUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import { connectRedis, type RedisConnection, type RedisTarget } from '../redis/redis-target.js';
import type { RateLimit, RateLimiter, RateLimitState } from './rate-limiter.js';
import { windowState } from './window-state.js';

export type RedisRateLimiterOptions = RedisTarget & {
  /** Keys are `${prefix}:ratelimit:${key}` (default `agentgw`); every command and script touches that one key. */
  prefix?: string;
  logger?: Logger;
};

/**
 * Counts and starts the window in one step, so concurrent replicas never see a counter without
 * an expiry. A key left without one (PTTL < 0) gets it here too rather than living forever.
 */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

/** Takes one back within the window (DECR keeps the expiry); a missing or zero counter stays as it is. */
const GIVE_BACK_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0
`;

/**
 * Counters in Redis (INCR + PEXPIRE in a Lua script), shared by every replica on the same Redis
 * and prefix. Fails closed: while Redis is unreachable, calls reject with a 503
 * DependencyUnavailableError after one retry rather than queueing for long.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: RedisConnection;
  private readonly keyPrefix: string;
  private readonly logger?: Logger;

  constructor(options: RedisRateLimiterOptions) {
    this.keyPrefix = `${options.prefix ?? 'agentgw'}:ratelimit:`;
    this.logger = options.logger;
    this.redis = connectRedis(options, { maxRetriesPerRequest: 1 });
    // Without a listener ioredis prints errors itself; reconnecting is automatic.
    this.redis.on('error', (err: Error) =>
      options.logger?.warn({ err: err.message }, 'redis rate limiter connection error'),
    );
  }

  async hit(key: string, rule: RateLimit): Promise<RateLimitState> {
    const reply = await this.guard(() => this.redis.eval(HIT_SCRIPT, 1, this.keyPrefix + key, rule.windowMs));
    const [count, ttl] = reply as [number, number];
    return windowState(count, ttl, rule.limit, true);
  }

  async peek(key: string, rule: RateLimit): Promise<RateLimitState> {
    const k = this.keyPrefix + key;
    const [count, ttl] = await this.guard(async () => {
      const replies = (await this.redis.multi().get(k).pttl(k).exec()) ?? [];
      return replies.map(([err, value]) => {
        if (err) throw err;
        return value;
      }) as [string | null, number];
    });
    return windowState(Number(count ?? 0), Math.max(0, ttl), rule.limit, false);
  }

  async giveBack(key: string): Promise<void> {
    await this.guard(() => this.redis.eval(GIVE_BACK_SCRIPT, 1, this.keyPrefix + key));
  }

  async reset(key: string): Promise<void> {
    await this.guard(() => this.redis.del(this.keyPrefix + key));
  }

  async close(): Promise<void> {
    // quit() lets pending commands finish; a connection that cannot quit (Redis gone) is dropped.
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** Turns a Redis failure into a 503; the cause goes to the log, not to the client. */
  private async guard<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      this.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'redis rate limiter command failed');
      throw new DependencyUnavailableError('Rate limiting is unavailable; try again later');
    }
  }
}
