import { bullKeyPrefix, type JobName, type RedisConnection } from '@agentgw/core';
import type { GaugeSample } from './metrics.js';

/** The queues whose depth is worth watching (audit backlog, pending deadlines, push deliveries). */
const WATCHED: JobName[] = ['audit-bulk', 'confirmation-timeout', 'push'];

/**
 * Reads BullMQ's own keys (`<bull prefix>:agentgw-<job>:wait|paused|prioritized|delayed|active`,
 * the layout `BullJobQueue` uses, `bullKeyPrefix`) with one pipeline per queue, so a scrape opens
 * no queue objects of its own; on a cluster each pipeline stays in its queue's slot.
 */
export function queueDepthReader(
  redis: RedisConnection,
  cluster: boolean,
  prefix = 'agentgw',
): () => Promise<GaugeSample[]> {
  return async () => {
    const counts = await Promise.all(
      WATCHED.map(async (job) => {
        const queueName = `${prefix}-${job}`;
        const key = `${bullKeyPrefix(queueName, cluster)}:${queueName}`;
        const replies =
          (await redis
            .pipeline()
            .llen(`${key}:wait`)
            .llen(`${key}:paused`)
            .zcard(`${key}:prioritized`)
            .zcard(`${key}:delayed`)
            .llen(`${key}:active`)
            .exec()) ?? [];
        return (i: number): number => Number(replies[i]?.[1] ?? 0);
      }),
    );
    return WATCHED.flatMap((queue, q): GaugeSample[] => {
      const count = counts[q]!;
      return [
        [{ queue, state: 'waiting' }, count(0) + count(1) + count(2)],
        [{ queue, state: 'delayed' }, count(3)],
        [{ queue, state: 'active' }, count(4)],
      ];
    });
  };
}
