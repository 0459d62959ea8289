import type { Config } from '../config.js';
import { RateLimitedError } from '../errors.js';
import type { RateLimiter } from './rate-limiter.js';

export interface CallQuotaLimits {
  /** Calls per window for one agent; 0 is unlimited. */
  perAgent: number;
  /** Calls per window for one tenant (or one tenant-less user's private scope); 0 is unlimited. */
  perTenant: number;
  windowMs: number;
}

/** Who a call counts against: the agent acting and the tenant (scope) it acts in; null counts nothing. */
export interface CallSubject {
  agentId: string | null;
  tenant: string | null;
}

/** The quotas from RATE_LIMIT_AGENT, RATE_LIMIT_TENANT and RATE_LIMIT_WINDOW_MS. */
export const callQuotaLimitsFrom = (
  config: Pick<Config, 'RATE_LIMIT_AGENT' | 'RATE_LIMIT_TENANT' | 'RATE_LIMIT_WINDOW_MS'>,
): CallQuotaLimits => ({
  perAgent: config.RATE_LIMIT_AGENT,
  perTenant: config.RATE_LIMIT_TENANT,
  windowMs: config.RATE_LIMIT_WINDOW_MS,
});

/**
 * Per-agent and per-tenant quotas on invoke and MCP calls, counted in the shared RateLimiter
 * (Redis in distributed mode, so every replica draws from the same window). One rule for both
 * services, so an agent cannot double its share by switching between them.
 */
export class CallQuota {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly limits: CallQuotaLimits,
  ) {}

  /** Counts one call; over either quota it throws RateLimitedError (429 with Retry-After). */
  async take(subject: CallSubject): Promise<void> {
    const checks: { what: 'agent' | 'tenant'; key: string; limit: number }[] = [];
    if (subject.agentId !== null && this.limits.perAgent > 0)
      checks.push({ what: 'agent', key: `calls:agent:${subject.agentId}`, limit: this.limits.perAgent });
    if (subject.tenant !== null && this.limits.perTenant > 0)
      checks.push({ what: 'tenant', key: `calls:tenant:${subject.tenant}`, limit: this.limits.perTenant });
    if (checks.length === 0) return;
    const states = await Promise.all(
      checks.map((c) => this.limiter.hit(c.key, { limit: c.limit, windowMs: this.limits.windowMs })),
    );
    const refused = states.map((state, i) => ({ state, check: checks[i]! })).filter(({ state }) => !state.allowed);
    if (refused.length === 0) return;
    const retryAfter = Math.max(1, ...refused.map(({ state }) => state.retryAfterSeconds));
    throw new RateLimitedError(
      `Rate limit of this ${refused.map(({ check }) => check.what).join(' and ')} exceeded; retry after ${retryAfter} s`,
      retryAfter,
    );
  }
}
