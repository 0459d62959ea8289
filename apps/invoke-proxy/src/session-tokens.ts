import { sessionRoles, SESSION_TOKEN_LIFETIME_SECONDS, type AuthService, type SessionTokenInput } from '@agentgw/auth';
import { MemoryCache, type Clock } from '@agentgw/core';
import type { RoleName } from '@agentgw/db';

/** A cached session token is handed out while at least this much of its lifetime is left. */
export const SESSION_TOKEN_MIN_REMAINING_MS = 5 * 60_000;

/** One invoke a session token is issued for: the caller as authenticated, and the agent invoked. */
export interface SessionRequest {
  endUser: { id: string; email: string | null; roles: readonly RoleName[]; tenantId: string | null };
  agent: { id: string; tenantId: string | null };
  requestId: string;
}

/**
 * What the agent may act as when it calls back: the end user, in the agent's tenant (the
 * user's own for a global agent), without admin-class roles. The token reaches the agent's
 * upstream, whose URL its registrant controls, so an admin invoking someone's agent must not
 * lend it the admin role or a view across tenants.
 */
export function sessionClaimsFor({ endUser, agent, requestId }: SessionRequest): SessionTokenInput {
  return {
    endUserId: endUser.id,
    email: endUser.email,
    roles: sessionRoles(endUser.roles),
    tenantId: agent.tenantId ?? endUser.tenantId,
    agentId: agent.id,
    requestId,
  };
}

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
    this.cache = new MemoryCache({
      ttlMs: SESSION_TOKEN_LIFETIME_SECONDS * 1000 - SESSION_TOKEN_MIN_REMAINING_MS,
      max: 10_000,
      clock,
    });
  }

  /** A token for this invoke's identity (`sessionClaimsFor`) that has at least `SESSION_TOKEN_MIN_REMAINING_MS` left. */
  tokenFor(request: SessionRequest): Promise<string> {
    const claims = sessionClaimsFor(request);
    const key = JSON.stringify([
      claims.agentId,
      claims.endUserId,
      claims.email,
      [...claims.roles].sort(),
      claims.tenantId,
    ]);
    return this.cache.getOrLoad(key, async () => (await this.auth.issueSessionToken(claims)).token);
  }
}
