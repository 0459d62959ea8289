import { DependencyUnavailableError, type RedisConnection } from '@agentgw/core';
import { randomUUID } from 'node:crypto';

/**
 * Mutual exclusion for refreshing one credential: whoever holds the key refreshes, the others wait
 * and then read what it stored. Redis across replicas; in-process for the all-in-one.
 */
export interface RefreshLock {
  /** Runs `fn` while holding `key`; waits (bounded) for a holder to finish first. */
  withLock<T>(key: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** One process: a promise chain per key (entries go when their chain ends, so the map stays bounded). */
export class MemoryRefreshLock implements RefreshLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  async close(): Promise<void> {}
}

/** Deletes the key only if it still holds our token (a lock that expired and was taken by another stays theirs). */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

export interface RedisRefreshLockOptions {
  /** How long a holder keeps the lock at most (a crashed holder frees it then). Default 15 s. */
  leaseMs?: number;
  /** How long a waiter waits before giving up with a 503. Default 20 s. */
  waitMs?: number;
  /** Keys are `${prefix}:oauth-refresh:${key}` (default `agentgw`). */
  prefix?: string;
}

/** Across replicas: `SET NX PX` with a random token, released by compare-and-delete (one key each: cluster safe). */
export class RedisRefreshLock implements RefreshLock {
  private readonly leaseMs: number;
  private readonly waitMs: number;
  private readonly prefix: string;

  constructor(
    private readonly redis: RedisConnection,
    options: RedisRefreshLockOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 15_000;
    this.waitMs = options.waitMs ?? 20_000;
    this.prefix = options.prefix ?? 'agentgw';
  }

  async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const name = `${this.prefix}:oauth-refresh:${key}`;
    const token = randomUUID();
    const deadline = Date.now() + this.waitMs;
    let pause = 20;
    while ((await this.redis.set(name, token, 'PX', this.leaseMs, 'NX')) !== 'OK') {
      if (Date.now() >= deadline)
        throw new DependencyUnavailableError('Another replica is still refreshing this credential; try again');
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 250);
    }
    try {
      return await fn();
    } finally {
      await this.redis.eval(RELEASE_SCRIPT, 1, name, token);
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
