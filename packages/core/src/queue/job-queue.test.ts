import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GatewayJobs } from '../jobs.js';
import { connectRedis, isCluster, type RedisTarget } from '../redis/redis-target.js';
import { testClusterTarget } from '../redis/local-redis-cluster.js';
import { BullJobQueue, MemoryJobQueue, type JobQueue } from './index.js';

const redisUrl = process.env.TEST_REDIS_URL;
const BACKOFF_MS = 20;
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const within = { timeout: 5000, interval: 10 };

/**
 * Each adapter gives handles onto one fresh namespace (as separate processes would have) and
 * wipes it afterwards. In-process, the namespace is the queue instance itself.
 */
interface Adapter {
  open(): JobQueue;
  cleanup(): Promise<void>;
}

const memoryAdapter = (): Adapter => {
  let queue: MemoryJobQueue | undefined;
  return {
    open: () => (queue ??= new MemoryJobQueue({ backoffMs: BACKOFF_MS })),
    cleanup: async () => {},
  };
};

/** Deletes the keys matching `pattern` on one Redis, or on every primary of a cluster (one key at a time: they span slots). */
async function deleteKeys(target: RedisTarget, pattern: string): Promise<void> {
  const connection = connectRedis(target);
  try {
    const servers = 'nodes' in connection ? connection.nodes('master') : [connection];
    for (const server of servers) {
      const keys: string[] = [];
      for await (const batch of server.scanStream({ match: pattern, count: 500 })) keys.push(...(batch as string[]));
      for (const key of keys) await connection.del(key);
    }
  } finally {
    await connection.quit();
  }
}

const bullAdapter = (target: RedisTarget) => (): Adapter => {
  const prefix = `test-${randomUUID()}`;
  return {
    open: () => new BullJobQueue({ ...target, prefix, backoffMs: BACKOFF_MS }),
    cleanup: () => deleteKeys(target, isCluster(target) ? `bull:{${prefix}-*` : `bull:${prefix}-*`),
  };
};

const adapters: [string, () => Adapter][] = [['memory', memoryAdapter]];
if (redisUrl) adapters.push(['bullmq', bullAdapter({ url: redisUrl })]);
const clusterTarget = testClusterTarget();
if (clusterTarget) adapters.push(['bullmq on a cluster', bullAdapter(clusterTarget)]);

const push = (userId: string): GatewayJobs['push'] => ({ userId, title: 't', body: 'b', data: { n: 1 } });

describe.each(adapters)('JobQueue contract (%s)', (_name, makeAdapter) => {
  let adapter: Adapter | undefined;
  const queues = new Set<JobQueue>();
  const open = () => {
    adapter ??= makeAdapter();
    const queue = adapter.open();
    queues.add(queue);
    return queue;
  };
  afterEach(async () => {
    await Promise.all([...queues].map((q) => q.close()));
    queues.clear();
    await adapter?.cleanup();
    adapter = undefined;
  });

  it('delivers an enqueued job to the consumer', async () => {
    const queue = open();
    const received: GatewayJobs['push'][] = [];
    await queue.consume('push', async (jobs) => {
      received.push(...jobs);
    });
    await queue.enqueue('push', push('u1'));
    await vi.waitFor(() => expect(received).toEqual([push('u1')]), within);
  });

  it('keeps jobs enqueued before any consumer exists, and delivers them once one starts elsewhere', async () => {
    const producer = open();
    const consumer = open();
    for (const id of ['u1', 'u2', 'u3']) await producer.enqueue('push', push(id));
    const received: string[] = [];
    await consumer.consume('push', async (jobs) => {
      received.push(...jobs.map((j) => j.userId));
    });
    await vi.waitFor(() => expect(received.sort()).toEqual(['u1', 'u2', 'u3']), within);
  });

  it('hands a full batch over at once', async () => {
    const queue = open();
    for (let i = 0; i < 5; i++) await queue.enqueue('push', push(`u${i}`));
    const batches: string[][] = [];
    await queue.consume(
      'push',
      async (jobs) => {
        batches.push(jobs.map((j) => j.userId).sort());
      },
      // The wait is long: a full batch must not wait for it.
      { batchSize: 5, batchWaitMs: 2000 },
    );
    await vi.waitFor(() => expect(batches).toEqual([['u0', 'u1', 'u2', 'u3', 'u4']]), { timeout: 1500, interval: 10 });
  });

  it('hands a partial batch over after batchWaitMs', async () => {
    const queue = open();
    const batches: string[][] = [];
    await queue.consume(
      'push',
      async (jobs) => {
        batches.push(jobs.map((j) => j.userId).sort());
      },
      { batchSize: 10, batchWaitMs: 150 },
    );
    await queue.enqueue('push', push('u1'));
    await queue.enqueue('push', push('u2'));
    await vi.waitFor(() => expect(batches).toEqual([['u1', 'u2']]), within);
  });

  it('runs a delayed job, but not before its delay', async () => {
    const queue = open();
    const fired: string[] = [];
    await queue.consume('confirmation-timeout', async (jobs) => {
      fired.push(...jobs.map((j) => j.confirmationId));
    });
    // A delay past the test's timeout cannot have run yet when later jobs have, however loaded the machine.
    await queue.enqueue('confirmation-timeout', { confirmationId: 'later' }, { jobId: 'later', delayMs: 600_000 });
    await queue.enqueue('confirmation-timeout', { confirmationId: 'soon' }, { delayMs: 300 });
    await queue.enqueue('confirmation-timeout', { confirmationId: 'at once' });
    await vi.waitFor(() => expect(fired.sort()).toEqual(['at once', 'soon']), within);
    await queue.cancel('confirmation-timeout', 'later');
  });

  it('retries a job after its handler fails, with the same data', async () => {
    const queue = open();
    const calls: GatewayJobs['push'][][] = [];
    await queue.consume('push', async (jobs) => {
      calls.push(jobs);
      if (calls.length === 1) throw new Error('first attempt fails');
    });
    await queue.enqueue('push', push('u1'));
    await vi.waitFor(() => expect(calls).toHaveLength(2), within);
    expect(calls[1]).toEqual([push('u1')]);
    await wait(BACKOFF_MS * 8);
    expect(calls).toHaveLength(2);
  });

  it('retries every job of a failed batch', async () => {
    const queue = open();
    for (const id of ['u1', 'u2', 'u3']) await queue.enqueue('push', push(id));
    let failed = false;
    const succeeded: string[] = [];
    await queue.consume(
      'push',
      async (jobs) => {
        if (!failed) {
          failed = true;
          throw new Error('batch fails');
        }
        succeeded.push(...jobs.map((j) => j.userId));
      },
      { batchSize: 3, batchWaitMs: 100 },
    );
    await vi.waitFor(() => expect(succeeded.sort()).toEqual(['u1', 'u2', 'u3']), within);
  });

  it('gives a job up after its attempts', async () => {
    const queue = open();
    let calls = 0;
    await queue.consume('push', async () => {
      calls += 1;
      throw new Error('always fails');
    });
    await queue.enqueue('push', push('u1'), { attempts: 3 });
    // Retries come after 20ms then 40ms.
    await vi.waitFor(() => expect(calls).toBe(3), within);
    await wait(BACKOFF_MS * 16);
    expect(calls).toBe(3);
  });

  it('ignores a job whose id already exists, and accepts the id again once the job is done', async () => {
    const queue = open();
    for (const jobId of ['order:42', '42']) {
      await queue.enqueue('push', push(`first ${jobId}`), { jobId });
      await queue.enqueue('push', push(`second ${jobId}`), { jobId });
    }
    const received: string[] = [];
    await queue.consume('push', async (jobs) => {
      received.push(...jobs.map((j) => j.userId));
    });
    await vi.waitFor(() => expect(received.sort()).toEqual(['first 42', 'first order:42']), within);
    await queue.enqueue('push', push('third order:42'), { jobId: 'order:42' });
    await vi.waitFor(() => expect(received).toContain('third order:42'), within);
    expect(received).toHaveLength(3);
  });

  it('cancels a delayed job', async () => {
    const queue = open();
    const fired: string[] = [];
    await queue.consume('confirmation-timeout', async (jobs) => {
      fired.push(...jobs.map((j) => j.confirmationId));
    });
    await queue.enqueue('confirmation-timeout', { confirmationId: 'cancelled' }, { jobId: 'cancelled', delayMs: 200 });
    await queue.enqueue('confirmation-timeout', { confirmationId: 'kept' }, { jobId: 'kept', delayMs: 250 });
    await queue.cancel('confirmation-timeout', 'cancelled');
    await queue.cancel('confirmation-timeout', 'never-existed');
    await vi.waitFor(() => expect(fired).toEqual(['kept']), within);
    await wait(100);
    expect(fired).toEqual(['kept']);
  });

  it('barrier: answers at once when nothing earlier is pending', { timeout: 30_000 }, async () => {
    const queue = open();
    // Deadlines beyond this test's 30 s timeout (a hang bound): a barrier that waited for them fails by it.
    expect(await queue.barrier(['push', 'audit-bulk'], 60_000)).toBe(true);
    const handled: string[] = [];
    await queue.consume('push', async (jobs) => {
      handled.push(...jobs.map((j) => j.userId));
    });
    await queue.enqueue('push', push('u1'));
    await vi.waitFor(() => expect(handled).toEqual(['u1']), within);
    expect(await queue.barrier(['push'], 60_000)).toBe(true);
  });

  it('barrier: waits for jobs enqueued before it on another handle, whose consumer hands its partial batch over without the batch wait', async () => {
    const producer = open();
    const consumer = open();
    const reader = open();
    const handled: string[] = [];
    await consumer.consume(
      'push',
      async (jobs) => {
        handled.push(...jobs.map((j) => j.userId));
      },
      // A wait far beyond the barrier's bound: only a flush request can hand these over in time.
      { batchSize: 100, batchWaitMs: 60_000 },
    );
    for (const id of ['u1', 'u2', 'u3']) await producer.enqueue('push', push(id));
    expect(await reader.barrier(['push'], 30_000)).toBe(true);
    expect(handled.sort()).toEqual(['u1', 'u2', 'u3']);
  });

  it('barrier: does not wait for jobs enqueued after it began', async () => {
    const queue = open();
    let releaseEarly!: () => void;
    let releaseLate!: () => void;
    const early = new Promise<void>((resolve) => (releaseEarly = resolve));
    const late = new Promise<void>((resolve) => (releaseLate = resolve));
    await queue.consume(
      'push',
      async (jobs) => {
        await (jobs.some((j) => j.userId === 'late') ? late : early);
      },
      { concurrency: 2 },
    );
    await queue.enqueue('push', push('early'));
    const barrier = queue.barrier(['push'], 5000);
    await wait(100);
    await queue.enqueue('push', push('late'));
    await wait(100);
    releaseEarly();
    try {
      expect(await barrier).toBe(true);
    } finally {
      releaseLate();
    }
  });

  it('barrier: gives up at its deadline while an earlier job is still unhandled', async () => {
    const queue = open();
    await queue.enqueue('push', push('nobody consumes this'));
    expect(await queue.barrier(['push'], 300)).toBe(false);
  });

  it(
    'barrier: keeps waiting before its deadline while an earlier job is unhandled, and answers once it is',
    { timeout: 30_000 },
    async () => {
      const queue = open();
      await queue.enqueue('push', push('u1'));
      let answer: boolean | undefined;
      // A deadline beyond this test's 30 s timeout: only the handled job can end this wait.
      const barrier = queue.barrier(['push'], 60_000).then((settled) => (answer = settled));
      // Many barrier checks (each 5-20 ms apart) pass here; none may give up while the job is unhandled.
      await wait(200);
      expect(answer).toBeUndefined();
      await queue.consume('push', async () => {});
      expect(await barrier).toBe(true);
    },
  );

  it(
    'barrier: answers false without waiting when the earlier job left is retrying after a failure',
    { timeout: 30_000 },
    async () => {
      const queue = open();
      let calls = 0;
      await queue.consume('push', async () => {
        calls += 1;
        throw new Error('always fails');
      });
      await queue.enqueue('push', push('u1'), { attempts: 20 });
      // Retries after 20, 40, 80, 160, 320 ms: after the fifth failure it is delayed for 320 ms.
      await vi.waitFor(() => expect(calls).toBe(5), within);
      await wait(30);
      // A deadline beyond this test's 30 s timeout: a barrier that waited for it (instead of answering at once) fails by it.
      expect(await queue.barrier(['push'], 60_000)).toBe(false);
    },
  );

  it('lets a closed consumer stop taking jobs, and another take over', async () => {
    const queue = open();
    const first: string[] = [];
    const consumer = await queue.consume('push', async (jobs) => {
      first.push(...jobs.map((j) => j.userId));
    });
    await queue.enqueue('push', push('u1'));
    await vi.waitFor(() => expect(first).toEqual(['u1']), within);
    await consumer.close();
    await queue.enqueue('push', push('u2'));
    const second: string[] = [];
    await queue.consume('push', async (jobs) => {
      second.push(...jobs.map((j) => j.userId));
    });
    await vi.waitFor(() => expect(second).toEqual(['u2']), within);
    expect(first).toEqual(['u1']);
  });
});
