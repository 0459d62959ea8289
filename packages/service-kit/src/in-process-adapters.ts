import { MemoryEventBus, MemoryJobQueue, MemoryRateLimiter, type Clock, type Logger } from '@agentgw/core';

/** The single-node bus, queue and rate limiter: the all-in-one without Redis, and tests. */
export function inProcessAdapters({ logger, clock }: { logger: Logger; clock?: Clock }) {
  return {
    bus: new MemoryEventBus({ logger }),
    queue: new MemoryJobQueue({ logger, clock }),
    rateLimiter: new MemoryRateLimiter({ clock }),
  };
}
