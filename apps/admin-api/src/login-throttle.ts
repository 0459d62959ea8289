import { RateLimitedError, type RateLimit, type RateLimiter } from '@agentgw/core';
import type { Context } from 'hono';

export interface LoginThrottleOptions {
  /** Failed logins allowed per account (email) in one window. */
  maxPerAccount?: number;
  /** Failed logins allowed per client address in one window (covers spraying many emails). */
  maxPerAddress?: number;
  windowMs?: number;
}

/**
 * Refuses logins after repeated failures for one account or one client address (fixed windows
 * of the rate limiter). Counters live in the limiter, so replicas sharing a Redis-backed one
 * refuse together. A successful login resets the account's counter, not the address's (one
 * valid account must not unlock guessing at the others).
 */
export class LoginThrottle {
  private readonly perAccount: RateLimit;
  private readonly perAddress: RateLimit;

  constructor(
    private readonly limiter: RateLimiter,
    options: LoginThrottleOptions = {},
  ) {
    const windowMs = options.windowMs ?? 15 * 60_000;
    this.perAccount = { limit: options.maxPerAccount ?? 5, windowMs };
    this.perAddress = { limit: options.maxPerAddress ?? 20, windowMs };
  }

  /** Throws 429 RATE_LIMITED (with Retry-After seconds) when either counter is exhausted. */
  async check(email: string, address: string): Promise<void> {
    // Peek, not hit: only failures count, and they are known only after the password check.
    const states = await Promise.all([
      this.limiter.peek(accountKey(email), this.perAccount),
      this.limiter.peek(addressKey(address), this.perAddress),
    ]);
    if (states.some((s) => !s.allowed)) {
      const retryAfter = Math.max(...states.map((s) => s.retryAfterSeconds));
      throw new RateLimitedError('Too many failed login attempts; try again later', retryAfter);
    }
  }

  async recordFailure(email: string, address: string): Promise<void> {
    await Promise.all([
      this.limiter.hit(accountKey(email), this.perAccount),
      this.limiter.hit(addressKey(address), this.perAddress),
    ]);
  }

  async recordSuccess(email: string): Promise<void> {
    await this.limiter.reset(accountKey(email));
  }
}

/** Limiter keys of the throttle; exported so tests sharing a real Redis can clean up after themselves. */
export const accountKey = (email: string): string => `login:account:${email.trim().toLowerCase()}`;
export const addressKey = (address: string): string => `login:address:${address}`;

/**
 * The address failures are counted against: the last X-Forwarded-For hop (the one our own
 * reverse proxy appends; earlier hops are client-supplied and spoofable), else the socket peer
 * under @hono/node-server.
 */
export function clientAddress(c: Context): string {
  const lastHop = c.req.header('x-forwarded-for')?.split(',').pop()?.trim();
  if (lastHop) return lastHop;
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}
