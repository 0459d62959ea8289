export type { RateLimit, RateLimitState, RateLimiter } from './rate-limiter.js';
export { MemoryRateLimiter } from './memory.js';
export { RedisRateLimiter } from './redis.js';
