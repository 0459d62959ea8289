export type { RateLimit, RateLimitState, RateLimiter } from './rate-limiter.js';
export { MemoryRateLimiter } from './memory.js';
export { RedisRateLimiter } from './redis.js';
export { CallQuota, callQuotaLimitsFrom } from './call-quota.js';
export type { CallQuotaLimits, CallSubject } from './call-quota.js';
