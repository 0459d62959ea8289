import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RedisEventBus } from '../bus/index.js';
import { BullJobQueue } from '../queue/index.js';
import { connectRedis } from './redis-target.js';
import { testClusterTarget } from './local-redis-cluster.js';

const target = testClusterTarget();

/** How the keys and channels of the adapters sit on a Redis Cluster (the local one of the global setup). */
describe.skipIf(!target)('Redis adapters on a Redis Cluster', () => {
  const cluster = target!;
  const admin = target ? (connectRedis(cluster) as Cluster) : undefined!;
  afterAll(() => admin.quit());
  /** Sums a PUBSUB count for `channel` over every node (a sharded subscription shows on its shard's node). */
  const subscribers = async (kind: 'NUMSUB' | 'SHARDNUMSUB', channel: string) => {
    let total = 0;
    for (const node of admin.nodes('all')) {
      const reply = (await node.call('PUBSUB', kind, channel)) as [string, number];
      total += Number(reply[1]);
    }
    return total;
  };

  it('subscribes the event bus with sharded pub/sub (SSUBSCRIBE), not cluster-wide SUBSCRIBE', async () => {
    const prefix = `test-${randomUUID()}`;
    const [listener, publisher] = [
      new RedisEventBus({ ...cluster, prefix }),
      new RedisEventBus({ ...cluster, prefix }),
    ];
    try {
      const heard: string[] = [];
      await listener.subscribe('user.changed', (p) => void heard.push(p.userId));
      const channel = `${prefix}:event:user.changed`;
      expect(await subscribers('SHARDNUMSUB', channel)).toBe(1);
      expect(await subscribers('NUMSUB', channel)).toBe(0);
      await publisher.publish('user.changed', { userId: 'u1' });
      await vi.waitFor(() => expect(heard).toEqual(['u1']));
    } finally {
      await Promise.all([listener.close(), publisher.close()]);
    }
  });

  it("keeps each BullMQ queue's keys in one slot (a hash tag per queue), and different queues on different tags", async () => {
    const prefix = `test-${randomUUID()}`;
    const queue = new BullJobQueue({ ...cluster, prefix });
    try {
      await queue.enqueue('push', { userId: 'u', title: 't', body: 'b', data: {} }, { delayMs: 60_000 });
      await queue.enqueue('confirmation-timeout', { confirmationId: 'c' }, { jobId: 'c1' });
      const slotsByQueue = new Map<string, Set<number>>();
      for (const node of admin.nodes('master')) {
        for (const key of await node.keys(`bull:{${prefix}-*`)) {
          const tag = /^bull:\{([^}]+)\}:/.exec(key)![1]!;
          const slots = slotsByQueue.get(tag) ?? new Set<number>();
          slots.add(Number(await admin.cluster('KEYSLOT', key)));
          slotsByQueue.set(tag, slots);
        }
      }
      expect([...slotsByQueue.keys()].sort()).toEqual([`${prefix}-confirmation-timeout`, `${prefix}-push`]);
      for (const slots of slotsByQueue.values()) expect(slots.size).toBe(1);
      expect(await queue.barrier(['confirmation-timeout', 'push'], 100)).toBe(false);
      await queue.cancel('confirmation-timeout', 'c1');
    } finally {
      await queue.close();
      for (const node of admin.nodes('master'))
        for (const key of await node.keys(`bull:{${prefix}-*`)) await admin.del(key);
    }
  });
});
