import { RateLimitedError, systemClock, type Clock } from '@agentgw/core';
import type { Context } from 'hono';

export interface LoginThrottleOptions {
  /** Failed logins allowed per account (email) in one window. */
  maxPerAccount?: number;
  /** Failed logins allowed per client address in one window (covers spraying many emails). */
  maxPerAddress?: number;
  windowMs?: number;
  clock?: Clock;
}

interface Window {
  failures: number;
  startedAt: number;
}

/** Entries kept before expired windows are swept, so a flood of distinct keys cannot grow memory without bound. */
const SWEEP_AT = 10_000;

/**
 * Refuses logins after repeated failures for one account or one client address (fixed windows).
 * State lives in this process only: with several replicas each counts on its own, so the
 * effective limit is per replica. A successful login resets the account's counter, not the
 * address's (one valid account must not unlock guessing at the others).
 */
export class LoginThrottle {
  private readonly maxPerAccount: number;
  private readonly maxPerAddress: number;
  private readonly windowMs: number;
  private readonly clock: Clock;
  private readonly windows = new Map<string, Window>();

  constructor(options: LoginThrottleOptions = {}) {
    this.maxPerAccount = options.maxPerAccount ?? 5;
    this.maxPerAddress = options.maxPerAddress ?? 20;
    this.windowMs = options.windowMs ?? 15 * 60_000;
    this.clock = options.clock ?? systemClock;
  }

  /** Throws 429 RATE_LIMITED (with Retry-After seconds) when either counter is exhausted. */
  check(email: string, address: string): void {
    const now = this.clock.now().getTime();
    const blocked = [this.blockedFor(accountKey(email), this.maxPerAccount, now), this.blockedFor(addressKey(address), this.maxPerAddress, now)];
    const retryAfterMs = Math.max(...blocked);
    if (retryAfterMs > 0) {
      throw new RateLimitedError('Too many failed login attempts; try again later', Math.ceil(retryAfterMs / 1000));
    }
  }

  recordFailure(email: string, address: string): void {
    const now = this.clock.now().getTime();
    if (this.windows.size >= SWEEP_AT) this.sweep(now);
    for (const key of [accountKey(email), addressKey(address)]) {
      const window = this.current(key, now);
      if (window) window.failures += 1;
      else this.windows.set(key, { failures: 1, startedAt: now });
    }
  }

  recordSuccess(email: string): void {
    this.windows.delete(accountKey(email));
  }

  /** Milliseconds until the key may try again, 0 when it may try now. */
  private blockedFor(key: string, max: number, now: number): number {
    const window = this.current(key, now);
    return window && window.failures >= max ? window.startedAt + this.windowMs - now : 0;
  }

  private current(key: string, now: number): Window | undefined {
    const window = this.windows.get(key);
    if (window && now - window.startedAt >= this.windowMs) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now - window.startedAt >= this.windowMs) this.windows.delete(key);
  }
}

const accountKey = (email: string): string => `account:${email.trim().toLowerCase()}`;
const addressKey = (address: string): string => `address:${address}`;

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
