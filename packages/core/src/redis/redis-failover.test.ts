import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisEventBus } from '../bus/index.js';
import type { GatewayJobs } from '../jobs.js';
import { BullJobQueue } from '../queue/index.js';
import { localClusterUnavailable, startLocalRedisCluster, type LocalRedisCluster } from './local-redis-cluster.js';
import { redisTargetFrom, type RedisTarget } from './redis-target.js';

const missing = process.env.TEST_REDIS_URL ? localClusterUnavailable() : 'TEST_REDIS_URL unset';
if (missing) console.warn(`Redis Cluster failover tests skipped: ${missing}`);

/**
 * A primary of a cluster of our own is killed by PID mid-run and its replica promoted: the
 * adapters reconnect by themselves and no acknowledged job is lost.
 */
describe.skipIf(missing)('Redis adapters through a cluster failover', () => {
  let cluster: LocalRedisCluster;
  let target: RedisTarget;
  /** The nodes of shards already failed over (the killed primary and the promoted replica, which has no replica left). */
  const failed = new Set<number>();
  beforeAll(async () => {
    cluster = await startLocalRedisCluster();
    target = redisTargetFrom({ REDIS_URL: cluster.url, REDIS_CLUSTER_NODES: cluster.nodesSetting.split(',') })!;
  });
  afterAll(() => cluster?.stop());

  /** A prefix whose `key(prefix)` lies on a shard not failed over yet (so it still has a replica to promote). */
  const prefixOnFreshShard = async (key: (prefix: string) => string) => {
    for (;;) {
      const prefix = `fo-${randomUUID().slice(0, 8)}`;
      const primary = await cluster.primaryOf(key(prefix));
      if (![...failed].some((port) => port === primary)) return { prefix, primary };
    }
  };

  it("keeps delivering on a subscription made before its shard's primary was killed, without subscribing again", async () => {
    const { prefix, primary } = await prefixOnFreshShard((p) => `${p}:event:user.changed`);
    const listener = new RedisEventBus({ ...target, prefix });
    const publisher = new RedisEventBus({ ...target, prefix });
    try {
      const heard: string[] = [];
      await listener.subscribe('user.changed', (p) => void heard.push(p.userId));
      await publisher.publish('user.changed', { userId: 'before' });
      await vi.waitFor(() => expect(heard).toEqual(['before']));
      failed.add(primary);
      const { promoted } = await cluster.failOver(primary);
      failed.add(promoted);
      console.log(`[failover] event bus: primary ${primary} killed, replica ${promoted} promoted`);
      // Pub/sub is at most once: a message published while the shard has no primary is gone, so publish until one arrives.
      let n = 0;
      await vi.waitFor(
        async () => {
          await publisher.publish('user.changed', { userId: `after-${n++}` }).catch(() => undefined);
          expect(heard.some((id) => id.startsWith('after-'))).toBe(true);
        },
        { timeout: 30_000, interval: 200 },
      );
    } finally {
      await Promise.all([listener.close(), publisher.close()]);
    }
  });

  it("loses no acknowledged job when the queue's primary is killed mid-run, and its consumer carries on", async () => {
    const { prefix, primary } = await prefixOnFreshShard((p) => `bull:{${p}-push}:${p}-push:id`);
    const producer = new BullJobQueue({ ...target, prefix, backoffMs: 50 });
    // A job active when its primary died is taken over after the lock and a stalled check (30 s each by default).
    const worker = new BullJobQueue({
      ...target,
      prefix,
      backoffMs: 50,
      lockDurationMs: 2_000,
      stalledIntervalMs: 1_000,
    });
    const handled = new Set<string>();
    const acknowledged: string[] = [];
    const refused: string[] = [];
    try {
      await worker.consume('push', async (jobs: GatewayJobs['push'][]) => {
        for (const job of jobs) handled.add(job.userId);
      });
      const enqueue = async (id: string) => {
        try {
          await producer.enqueue('push', { userId: id, title: 't', body: 'b', data: {} }, { jobId: id });
          acknowledged.push(id);
        } catch {
          refused.push(id);
        }
      };
      const before = Array.from({ length: 100 }, (_, i) => enqueue(`before-${i}`));
      const killed = cluster.failOver(primary);
      const during = Array.from({ length: 100 }, (_, i) => enqueue(`during-${i}`));
      const { promoted } = await killed;
      await Promise.all([...before, ...during]);
      for (let i = 0; i < 50; i++) await enqueue(`after-${i}`);
      console.log(
        `[failover] job queue: primary ${primary} killed, replica ${promoted} promoted; ${acknowledged.length} enqueues acknowledged, ${refused.length} refused (never acknowledged)`,
      );
      await vi.waitFor(() => expect(acknowledged.filter((id) => !handled.has(id))).toEqual([]), { timeout: 60_000 });
      expect(acknowledged.filter((id) => id.startsWith('after-'))).toHaveLength(50);
    } finally {
      await Promise.all([producer.close(), worker.close()]);
    }
  });
});
