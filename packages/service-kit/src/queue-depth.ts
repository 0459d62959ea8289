import type { JobName } from '@agentgw/core';
import type { Redis } from 'ioredis';
import type { GaugeSample } from './metrics.js';

/** The queues whose depth is worth watching (audit backlog, pending deadlines, push deliveries). */
const WATCHED: JobName[] = ['audit-bulk', 'confirmation-timeout', 'push'];

/**
 * Reads BullMQ's own keys (`bull:agentgw-<job>:wait|paused|prioritized|delayed|active`, the
 * layout `BullJobQueue` uses) in one round trip, so a scrape opens no queue objects of its own.
 */
export function queueDepthReader(redis: Redis, prefix = 'agentgw'): () => Promise<GaugeSample[]> {
  return async () => {
    const pipeline = redis.pipeline();
    for (const job of WATCHED) {
      const key = `bull:${prefix}-${job}`;
      pipeline
        .llen(`${key}:wait`)
        .llen(`${key}:paused`)
        .zcard(`${key}:prioritized`)
        .zcard(`${key}:delayed`)
        .llen(`${key}:active`);
    }
    const replies = (await pipeline.exec()) ?? [];
    const count = (i: number): number => Number(replies[i]?.[1] ?? 0);
    return WATCHED.flatMap((queue, q): GaugeSample[] => {
      const i = q * 5;
      return [
        [{ queue, state: 'waiting' }, count(i) + count(i + 1) + count(i + 2)],
        [{ queue, state: 'delayed' }, count(i + 3)],
        [{ queue, state: 'active' }, count(i + 4)],
      ];
    });
  };
}
