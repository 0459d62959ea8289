import { systemClock, type Clock } from '../clock.js';
import type { RateLimit, RateLimiter, RateLimitState } from './rate-limiter.js';
import { windowState } from './window-state.js';

interface Window {
  count: number;
  endsAt: number;
}

/** Windows kept before expired ones are swept, so a flood of distinct keys cannot grow memory without bound. */
const SWEEP_AT = 10_000;

/** In-process counters for the all-in-one and tests; windows follow the injected `clock`. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly clock: Clock;
  private readonly windows = new Map<string, Window>();

  constructor(options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async hit(key: string, rule: RateLimit): Promise<RateLimitState> {
    const now = this.clock.now().getTime();
    if (this.windows.size >= SWEEP_AT) this.sweep(now);
    let window = this.current(key, now);
    if (!window) {
      window = { count: 0, endsAt: now + rule.windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return windowState(window.count, window.endsAt - now, rule.limit, true);
  }

  async peek(key: string, rule: RateLimit): Promise<RateLimitState> {
    const now = this.clock.now().getTime();
    const window = this.current(key, now);
    return windowState(window?.count ?? 0, window ? window.endsAt - now : 0, rule.limit, false);
  }

  async giveBack(key: string): Promise<void> {
    const window = this.current(key, this.clock.now().getTime());
    if (window && window.count > 0) window.count -= 1;
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  async close(): Promise<void> {
    this.windows.clear();
  }

  private current(key: string, now: number): Window | undefined {
    const window = this.windows.get(key);
    if (window && now >= window.endsAt) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now >= window.endsAt) this.windows.delete(key);
  }
}
