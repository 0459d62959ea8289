import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BullJobQueue, JobBatchFailures } from './index.js';

const redisUrl = process.env.TEST_REDIS_URL;
const within = { timeout: 5000, interval: 10 };

// BullMQ-only behaviour beside the shared contract suite (job-queue.test.ts).
describe.skipIf(!redisUrl)('BullJobQueue extras', () => {
  const prefix = `test-${randomUUID()}`;
  let queue: BullJobQueue | undefined;
  afterEach(async () => {
    await queue?.close();
    const redis = new Redis(redisUrl!);
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `bull:${prefix}-*`, count: 500 }))
      keys.push(...(batch as string[]));
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('fails only the jobs a JobBatchFailures names, and keeps one that failed for good when asked', async () => {
    queue = new BullJobQueue({ url: redisUrl!, prefix, backoffMs: 10 });
    for (const id of ['good-1', 'poison', 'good-2'])
      await queue.enqueue('confirmation-timeout', { confirmationId: id }, { jobId: id, attempts: 2, keepFailed: true });
    const calls: string[][] = [];
    await queue.consume(
      'confirmation-timeout',
      async (jobs) => {
        calls.push(jobs.map((j) => j.confirmationId));
        const bad = jobs.findIndex((j) => j.confirmationId === 'poison');
        if (bad >= 0) throw new JobBatchFailures(new Map([[bad, new Error('poison: cannot be written')]]));
      },
      { batchSize: 3, batchWaitMs: 100 },
    );
    const inspect = new Queue(`${prefix}-confirmation-timeout`, { connection: { url: redisUrl! } });
    try {
      await vi.waitFor(async () => expect(await inspect.getFailedCount()).toBe(1), within);
      const [failed] = await inspect.getFailed();
      expect(failed?.data.confirmationId).toBe('poison');
      expect(failed?.failedReason).toBe('poison: cannot be written');
      // The good jobs ran once; only the poison was retried.
      expect(calls.flat().sort()).toEqual(['good-1', 'good-2', 'poison', 'poison']);
    } finally {
      await inspect.close();
    }
  });
});
