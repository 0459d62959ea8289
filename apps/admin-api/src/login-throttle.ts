import {
  embeddedIpv4,
  inCidr,
  parseCidr,
  parseIp,
  RateLimitedError,
  type Cidr,
  type Config,
  type RateLimit,
  type RateLimiter,
} from '@agentgw/core';
import { peerAddress } from '@agentgw/service-kit';
import type { Context } from 'hono';

/** The login limits (LOGIN_MAX_PER_ACCOUNT, LOGIN_MAX_PER_ADDRESS, LOGIN_WINDOW_MS). */
export interface LoginLimits {
  /** Login attempts allowed per account (email) in one window. */
  maxPerAccount: number;
  /** Failed logins allowed per client address in one window (covers spraying many emails). */
  maxPerAddress: number;
  windowMs: number;
}

/** Registrations allowed per client address, and their window; fixed unless a test narrows them. */
export interface RegistrationLimits {
  maxRegistrationsPerAddress?: number;
  registrationWindowMs?: number;
}

/** The login limits from the configuration. */
export const loginLimitsFrom = (
  config: Pick<Config, 'LOGIN_MAX_PER_ACCOUNT' | 'LOGIN_MAX_PER_ADDRESS' | 'LOGIN_WINDOW_MS'>,
): LoginLimits => ({
  maxPerAccount: config.LOGIN_MAX_PER_ACCOUNT,
  maxPerAddress: config.LOGIN_MAX_PER_ADDRESS,
  windowMs: config.LOGIN_WINDOW_MS,
});

/**
 * Refuses logins after repeated attempts for one account or repeated failures from one client
 * address, and registrations after repeated ones from one address (fixed windows of the rate
 * limiter).
 *
 * Every attempt is counted BEFORE the password is checked (one atomic increment per counter),
 * so 40 parallel guesses cannot all slip past a limit of 5 while the first scrypt runs: at most
 * the limit reach the password check. A successful login then clears the account's counter and
 * gives its one attempt back to the address: the address budget counts failures, so colleagues
 * behind one NAT are never locked out by their own logins, while a success never buys a guess
 * (it only returns what it took). Only logins in flight at the same instant share the budget.
 * Counters live in the limiter, so replicas sharing a Redis-backed one refuse together.
 */
export class LoginThrottle {
  private readonly perAccount: RateLimit;
  private readonly perAddress: RateLimit;
  private readonly registrations: RateLimit;

  constructor(
    private readonly limiter: RateLimiter,
    limits: LoginLimits,
    registration: RegistrationLimits = {},
  ) {
    this.perAccount = { limit: limits.maxPerAccount, windowMs: limits.windowMs };
    this.perAddress = { limit: limits.maxPerAddress, windowMs: limits.windowMs };
    this.registrations = {
      limit: registration.maxRegistrationsPerAddress ?? 10,
      windowMs: registration.registrationWindowMs ?? 60 * 60_000,
    };
  }

  /** Counts one login attempt; throws 429 RATE_LIMITED (with Retry-After seconds) past either limit. */
  async attempt(email: string, address: string): Promise<void> {
    const states = await Promise.all([
      this.limiter.hit(accountKey(email), this.perAccount),
      this.limiter.hit(addressKey(address), this.perAddress),
    ]);
    if (states.some((s) => !s.allowed)) {
      const retryAfter = Math.max(...states.map((s) => s.retryAfterSeconds));
      throw new RateLimitedError('Too many login attempts; try again later', retryAfter);
    }
  }

  /** A correct password: the account starts afresh and the address gets its attempt back. */
  async recordSuccess(email: string, address: string): Promise<void> {
    await Promise.all([this.limiter.reset(accountKey(email)), this.limiter.giveBack(addressKey(address))]);
  }

  /** Counts one registration (each costs a password hash); throws 429 past the limit. */
  async registration(address: string): Promise<void> {
    const state = await this.limiter.hit(registrationKey(address), this.registrations);
    if (!state.allowed) throw new RateLimitedError('Too many registrations; try again later', state.retryAfterSeconds);
  }
}

/** Limiter keys of the throttle; exported so tests sharing a real Redis can clean up after themselves. */
export const accountKey = (email: string): string => `login:account:${email.trim().toLowerCase()}`;
export const addressKey = (address: string): string => `login:address:${address}`;
export const registrationKey = (address: string): string => `register:address:${address}`;

/** TRUSTED_PROXIES parsed once (the config has already validated every entry). */
export function trustedProxies(list: readonly string[]): Cidr[] {
  return list.map((entry) => parseCidr(entry)).filter((c): c is Cidr => c !== undefined);
}

// A v4 proxy seen by a dual-stack socket as ::ffff:a.b.c.d is the same proxy.
const isTrusted = (address: string, proxies: readonly Cidr[]) => {
  const parsed = parseIp(address);
  const ip = parsed && (embeddedIpv4(parsed) ?? parsed);
  return ip !== undefined && proxies.some((c) => inCidr(ip, c));
};

/**
 * The address attempts are counted against. The socket peer, unless it is one of
 * TRUSTED_PROXIES: then X-Forwarded-For is walked from the right (each proxy appends the address
 * it saw) past trusted proxies, and the first untrusted hop is the client. A caller talking to
 * us directly can therefore never choose its address by sending X-Forwarded-For.
 */
export function clientAddress(c: Context, proxies: readonly Cidr[]): string {
  const peer = peerAddress(c) ?? 'unknown';
  if (proxies.length === 0 || !isTrusted(peer, proxies)) return peer;
  const hops = (c.req.header('x-forwarded-for') ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  const untrusted = hops.findLast((hop) => !isTrusted(hop, proxies));
  if (untrusted !== undefined) return untrusted;
  return hops[0] ?? peer;
}
