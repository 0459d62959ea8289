import { ManualClock, RateLimitedError } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { LoginThrottle } from './login-throttle.js';

const MINUTE = 60_000;

function fail(throttle: LoginThrottle, times: number, email: string, address: string): void {
  for (let i = 0; i < times; i++) {
    throttle.check(email, address);
    throttle.recordFailure(email, address);
  }
}

function refusal(fn: () => void): RateLimitedError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RateLimitedError) return err;
    throw err;
  }
  throw new Error('expected a RateLimitedError');
}

describe('LoginThrottle', () => {
  it('refuses an account after 5 failures within the window and says when to retry', () => {
    const clock = new ManualClock();
    const throttle = new LoginThrottle({ clock });
    fail(throttle, 5, 'a@example.test', '10.0.0.1');
    clock.advance(5 * MINUTE);
    const err = refusal(() => throttle.check('A@Example.test', '10.0.0.2'));
    expect(err.status).toBe(429);
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.retryAfterSeconds).toBe(10 * 60);
    // Other accounts from another address are unaffected.
    expect(() => throttle.check('b@example.test', '10.0.0.2')).not.toThrow();
  });

  it('lets the account try again once the window has passed', () => {
    const clock = new ManualClock();
    const throttle = new LoginThrottle({ clock });
    fail(throttle, 5, 'a@example.test', '10.0.0.1');
    clock.advance(15 * MINUTE - 1);
    expect(() => throttle.check('a@example.test', '10.0.0.9')).toThrow(RateLimitedError);
    clock.advance(1);
    expect(() => throttle.check('a@example.test', '10.0.0.9')).not.toThrow();
  });

  it('resets the account counter on success, but not the address counter', () => {
    const throttle = new LoginThrottle({ clock: new ManualClock(), maxPerAddress: 6 });
    fail(throttle, 4, 'a@example.test', '10.0.0.1');
    throttle.recordSuccess('a@example.test');
    fail(throttle, 2, 'a@example.test', '10.0.0.1');
    // Account: 2 failures since the success. Address: 6 in total → refused.
    expect(() => throttle.check('a@example.test', '10.0.0.2')).not.toThrow();
    expect(() => throttle.check('c@example.test', '10.0.0.1')).toThrow(RateLimitedError);
  });

  it('refuses an address spraying many accounts after 20 failures', () => {
    const throttle = new LoginThrottle({ clock: new ManualClock() });
    for (let i = 0; i < 20; i++) fail(throttle, 1, `user${i}@example.test`, '192.0.2.7');
    expect(() => throttle.check('fresh@example.test', '192.0.2.7')).toThrow(RateLimitedError);
    expect(() => throttle.check('fresh@example.test', '192.0.2.8')).not.toThrow();
  });
});
