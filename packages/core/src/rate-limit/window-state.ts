import type { RateLimitState } from './rate-limiter.js';

/**
 * The state of a window holding `count` hits with `msLeft` to run. `counted` says whether the hit
 * being judged is already in `count` (`hit`) or would be the next one (`peek`).
 */
export function windowState(count: number, msLeft: number, limit: number, counted: boolean): RateLimitState {
  const allowed = counted ? count <= limit : count < limit;
  return { allowed, remaining: Math.max(0, limit - count), retryAfterSeconds: allowed ? 0 : Math.ceil(msLeft / 1000) };
}
