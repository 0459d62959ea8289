import { SESSION_TOKEN_LIFETIME_SECONDS, type AuthService, type SessionTokenInput } from '@agentgw/auth';
import { MemoryCache, type Clock } from '@agentgw/core';

/** A cached session token is handed out while at least this much of its lifetime is left. */
export const SESSION_TOKEN_MIN_REMAINING_MS = 5 * 60_000;

/**
 * Session tokens reused per (agent, end user, email, roles, tenant) instead of one JWT signed per
 * invoke: every field the token carries except `requestId`, which then names the invoke that
 * first got the token. A role, tenant or email change is a different key, so a new token. Kept
 * in memory only, at most 10,000, each handed out until `SESSION_TOKEN_MIN_REMAINING_MS` before
 * it expires.
 */
export class SessionTokens {
  private readonly cache: MemoryCache<string>;

  constructor(
    private readonly auth: Pick<AuthService, 'issueSessionToken'>,
    clock?: Clock,
  ) {
    this.cache = new MemoryCache({ ttlMs: SESSION_TOKEN_LIFETIME_SECONDS * 1000 - SESSION_TOKEN_MIN_REMAINING_MS, max: 10_000, clock });
  }

  /** A token for this identity that has at least `SESSION_TOKEN_MIN_REMAINING_MS` left. */
  tokenFor(input: SessionTokenInput): Promise<string> {
    const key = JSON.stringify([input.agentId, input.endUserId, input.email, [...input.roles].sort(), input.tenantId]);
    return this.cache.getOrLoad(key, async () => (await this.auth.issueSessionToken(input)).token);
  }
}
