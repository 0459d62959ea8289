/** How many hits one key may take per window. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

export interface RateLimitState {
  /** For `hit`: whether the hit just counted fits the limit. For `peek`: whether a hit now would. */
  allowed: boolean;
  /** Hits the current window still allows. */
  remaining: number;
  /** Seconds until the window ends; 0 when allowed. */
  retryAfterSeconds: number;
}

/**
 * Fixed-window counters shared by every process using the same store. A key's window starts at
 * its first hit and lasts `windowMs`; hits after that do not extend it. Fixed windows allow up
 * to twice the limit across a window boundary, an accepted trade for one counter per key. The
 * same key must always be used with the same `RateLimit`.
 */
export interface RateLimiter {
  /** Counts one hit against `key`. */
  hit(key: string, rule: RateLimit): Promise<RateLimitState>;
  /** Reads `key` without counting, to refuse before doing work whose outcome decides whether to count. */
  peek(key: string, rule: RateLimit): Promise<RateLimitState>;
  /**
   * Takes one hit back from `key`'s current window (never below zero; nothing without a window),
   * for work counted up front, atomically, whose outcome turned out not to count (a good login).
   */
  giveBack(key: string): Promise<void>;
  /** Forgets `key`'s window. */
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}
