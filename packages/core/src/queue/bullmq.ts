import { Queue, Worker, type Job } from 'bullmq';
import type { GatewayJobs, JobName } from '../jobs.js';
import type { Logger } from '../logger.js';
import { RedisChannels } from '../redis/redis-channels.js';
import { connectRedis, isCluster, type RedisConnection, type RedisTarget } from '../redis/redis-target.js';
import { settleWithin } from '../settle-within.js';
import { JobBatchFailures } from './batch-failures.js';
import type { ConsumeOptions, Consumer, EnqueueOptions, JobHandler, JobQueue } from './job-queue.js';

export type BullJobQueueOptions = RedisTarget & {
  /** Queue names are `${prefix}-${jobName}` (default `agentgw`); see `bullKeyPrefix` for their keys. */
  prefix?: string;
  /** First retry delay; each further retry doubles it (default 1000). */
  backoffMs?: number;
  logger?: Logger;
  /**
   * How long a worker holds a job before another may take it over (BullMQ `lockDuration`,
   * default 30 s), and how often stalled jobs are looked for (`stalledInterval`, default 30 s):
   * a job whose worker died is redelivered within about the sum of the two.
   */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
};

/**
 * The BullMQ key prefix of a queue. One Redis: BullMQ's default (`bull:<queue>:…`). A cluster:
 * `bull:{<queue>}`, a hash tag per queue, so each queue's keys (and BullMQ's scripts over them)
 * sit in one slot while the queues spread over the shards (`bull:{<queue>}:<queue>:wait`, …).
 */
export function bullKeyPrefix(queueName: string, cluster: boolean): string {
  return cluster ? `bull:{${queueName}}` : 'bull';
}

/**
 * BullMQ ids may not be integers nor contain ':', while the port takes any string: an id is
 * stored as `id-` plus its URI encoding (':' becomes %3A), which is still unique per id.
 */
const bullJobId = (jobId: string): string => `id-${encodeURIComponent(jobId)}`;

/** How long and how many failed jobs stay in the failed set when an enqueuer asks to keep them. */
const KEEP_FAILED = { age: 14 * 24 * 3600, count: 10_000 };

/** Most queue entries one barrier check looks through; beyond it the queue counts as not settled. */
const BARRIER_SCAN_LIMIT = 20_000;

/** A barrier check's answer for one queue, as BARRIER_CHECK returns it. */
const Progress = { settled: 0, pending: 1, unknown: 2, delayed: 3 } as const;

/**
 * One barrier check of a queue, atomic in Redis. BullMQ numbers jobs added without an id from
 * the queue's `id` counter (in the same script that stores them), so every job enqueued before
 * the counter is read has a number up to it; a job is unsettled while its id sits in one of
 * the lists or sets below (it leaves them when completed or failed for good). The wait list is
 * read from its oldest end, so a backlog is found at once.
 * KEYS: id, active, wait, paused, prioritized, waiting-children, delayed.
 * ARGV: the mark ('' reads the counter now), the scan limit.
 * Returns { mark, state }, state a Progress: pending when a job up to the mark is in one of the
 * first five, delayed when only the delayed set holds one, unknown past the scan limit.
 */
const BARRIER_CHECK = `
local mark = tonumber(ARGV[1]) or tonumber(redis.call('GET', KEYS[1])) or 0
local budget = tonumber(ARGV[2])
local CHUNK = 500
local function scan(key, isList)
  local size = isList and redis.call('LLEN', key) or redis.call('ZCARD', key)
  local from = 0
  while from < size do
    if budget <= 0 then return 2 end
    local ids
    if isList then ids = redis.call('LRANGE', key, -from - CHUNK, -from - 1)
    else ids = redis.call('ZRANGE', key, from, from + CHUNK - 1) end
    for _, id in ipairs(ids) do
      local n = tonumber(id)
      if n and n <= mark then return 1 end
    end
    budget = budget - #ids
    from = from + CHUNK
  end
  return 0
end
if mark == 0 then return { 0, 0 } end
for i = 2, 6 do
  local state = scan(KEYS[i], i <= 4)
  if state ~= 0 then return { mark, state } end
end
local state = scan(KEYS[7], false)
if state == 1 then return { mark, 3 } end
return { mark, state }
`;

/** The BullMQ keys BARRIER_CHECK reads, in its KEYS order. */
const BARRIER_KEYS = ['id', 'active', 'wait', 'paused', 'prioritized', 'waiting-children', 'delayed'] as const;

/** One of a queue's Redis keys by BullMQ's name for it; a missing one means BullMQ renamed its keys (fail loudly, never scan nothing). */
function queueKey(keys: Readonly<Record<string, string>>, name: string): string {
  const key = keys[name];
  if (key === undefined) throw new Error(`BullMQ queue keys have no "${name}"`);
  return key;
}

/** Pub/sub channel on which barriers ask a queue's consumers (in every process) to hand over partial batches. */
const flushChannel = (queueName: string): string => `agentgw:flush:${queueName}`;

/** How long an enqueue on a cluster waits for a replica to confirm the job (see `replicated`). */
const REPLICA_WAIT_MS = 500;
/** After a replica failed to confirm in time, how long that queue's enqueues go without waiting. */
const REPLICA_RETRY_MS = 10_000;

/**
 * How long a closing worker may take once this consumer's own handlers have finished (BullMQ then
 * only records their outcomes). After a failover on a Redis Cluster, BullMQ's Worker.close() can
 * wait for good: it disconnects its blocking connection and awaits that ioredis Cluster's 'end'
 * event, which a cluster whose node pool is already empty (emptied while following the failover)
 * never emits. Past this bound the worker is left, said once; its jobs' locks lapse as after a crash.
 */
const WORKER_CLOSE_MS = 5_000;

/** Pause between barrier checks (each one Lua call): 5 ms for the first 100 ms (a batch write takes milliseconds), then 20 ms. */
const barrierPause = (attempt: number): number => (attempt < 20 ? 5 : 20);

/** JobQueue on BullMQ (Redis): durable, shared by every replica. */
export class BullJobQueue implements JobQueue {
  private readonly prefix: string;
  private readonly backoffMs: number;
  private readonly logger?: Logger;
  private readonly workerTiming: { lockDuration?: number; stalledInterval?: number };
  /** Producers fail fast-ish when Redis is gone; workers must retry forever (BullMQ requires it). */
  private readonly producerConnection: RedisConnection;
  private readonly workerConnection: RedisConnection;
  private readonly queues = new Map<JobName, Queue>();
  private readonly consumers = new Set<BullConsumer>();
  /** Barriers' flush requests: published by any handle, heard by consumers (their subscriber connection opens with the first). */
  private readonly flushChannels: RedisChannels;
  private readonly cluster: boolean;
  /** Per queue: until when enqueues skip the replica wait (its shard had no replica in sync). */
  private readonly unreplicatedUntil = new Map<JobName, number>();

  constructor(options: BullJobQueueOptions) {
    this.prefix = options.prefix ?? 'agentgw';
    this.backoffMs = options.backoffMs ?? 1000;
    this.logger = options.logger;
    this.workerTiming = { lockDuration: options.lockDurationMs, stalledInterval: options.stalledIntervalMs };
    this.cluster = isCluster(options);
    this.producerConnection = connectRedis(options);
    this.workerConnection = connectRedis(options, { maxRetriesPerRequest: null });
    this.flushChannels = new RedisChannels(options, {
      publisher: this.producerConnection,
      onMessage: (channel) => {
        for (const consumer of this.consumers) if (flushChannel(consumer.queueName) === channel) consumer.urge();
      },
      onError: (err) =>
        this.logger?.warn({ err: err.message, role: 'flush-subscriber' }, 'redis job queue connection error'),
    });
    for (const [role, connection] of [
      ['producer', this.producerConnection],
      ['worker', this.workerConnection],
    ] as const) {
      connection.on('error', (err: Error) =>
        this.logger?.warn({ err: err.message, role }, 'redis job queue connection error'),
      );
    }
  }

  async enqueue<J extends JobName>(name: J, data: GatewayJobs[J], options: EnqueueOptions = {}): Promise<void> {
    // A job whose id already exists is not added again: that is BullMQ's own dedupe.
    await this.queue(name).add(name, data, {
      jobId: options.jobId === undefined ? undefined : bullJobId(options.jobId),
      delay: options.delayMs && options.delayMs > 0 ? options.delayMs : undefined,
      attempts: Math.max(1, options.attempts ?? 5),
      backoff: { type: 'exponential', delay: this.backoffMs },
      // Gone once settled, so the id can be used again, as with the in-process queue.
      removeOnComplete: true,
      removeOnFail: options.keepFailed ? KEEP_FAILED : true,
    });
    if (this.cluster) await this.replicated(name);
  }

  async cancel(name: JobName, jobId: string): Promise<void> {
    // Returns 0 for an active (locked) job, which is left to finish.
    await this.queue(name).remove(bullJobId(jobId));
  }

  async consume<J extends JobName>(name: J, handler: JobHandler<J>, options: ConsumeOptions = {}): Promise<Consumer> {
    const queueName = this.queueName(name);
    const consumer = new BullConsumer(
      queueName,
      this.workerConnection,
      bullKeyPrefix(queueName, this.cluster),
      handler as JobHandler<JobName>,
      options,
      this.workerTiming,
      this.logger,
    );
    this.consumers.add(consumer);
    await Promise.all([consumer.ready(), this.flushChannels.subscribe(flushChannel(queueName))]);
    return consumer;
  }

  async barrier(names: readonly JobName[], timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    const queues = await Promise.all(names.map(async (name) => ({ name, ...(await this.check(name, '')) })));
    const unsettled = (q: (typeof queues)[number]) => q.state === Progress.pending || q.state === Progress.unknown;
    for (let attempt = 0; queues.some(unsettled); attempt++) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      const pending = queues.filter(unsettled);
      // Asked again each round: a job that reached a consumer after the last request would otherwise wait out batchWaitMs.
      await Promise.all(pending.map((q) => this.flushChannels.publish(flushChannel(this.queueName(q.name)), '')));
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, barrierPause(attempt))));
      await Promise.all(
        pending.map(async (q) => {
          q.state = (await this.check(q.name, String(q.mark))).state;
        }),
      );
    }
    return queues.every((q) => q.state === Progress.settled);
  }

  async close(): Promise<void> {
    // A consumer already closed by its owner closes again as a no-op.
    await Promise.all([...this.consumers].map((c) => c.close()));
    this.consumers.clear();
    this.flushChannels.close();
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
    await Promise.all(
      [this.producerConnection, this.workerConnection].map((c) => c.quit().catch(() => c.disconnect())),
    );
  }

  /** One barrier check of a queue (see BARRIER_CHECK); `mark` '' takes the mark now. */
  private async check(
    name: JobName,
    mark: string,
  ): Promise<{ mark: number; state: (typeof Progress)[keyof typeof Progress] }> {
    const keys = this.queue(name).keys;
    const [at, state] = (await this.producerConnection.eval(
      BARRIER_CHECK,
      BARRIER_KEYS.length,
      ...BARRIER_KEYS.map((key) => queueKey(keys, key)),
      mark,
      BARRIER_SCAN_LIMIT,
    )) as [number, (typeof Progress)[keyof typeof Progress]];
    return { mark: at, state };
  }

  /**
   * Waits (at most REPLICA_WAIT_MS) until a replica of the queue's primary has every write this
   * handle made there, so a failover right after an enqueue was acknowledged does not lose the job
   * (Redis replicates asynchronously). The keyed EXISTS routes the pipeline, and so WAIT, to that
   * primary, over the connection the add used. A shard with no replica in sync (one just promoted)
   * goes unconfirmed, said once, and is not waited on again for REPLICA_RETRY_MS.
   */
  private async replicated(name: JobName): Promise<void> {
    if ((this.unreplicatedUntil.get(name) ?? 0) > Date.now()) return;
    const [, waited] =
      (await this.producerConnection
        .pipeline()
        .exists(queueKey(this.queue(name).keys, 'id'))
        .wait(1, REPLICA_WAIT_MS)
        .exec()) ?? [];
    if (!waited?.[0] && Number(waited?.[1]) >= 1) return;
    this.unreplicatedUntil.set(name, Date.now() + REPLICA_RETRY_MS);
    this.logger?.warn(
      { queue: name, err: waited?.[0]?.message, retryInMs: REPLICA_RETRY_MS },
      'no replica confirmed an enqueued job in time: a failover now could lose it',
    );
  }

  private queueName(name: JobName): string {
    return `${this.prefix}-${name}`;
  }

  private queue(name: JobName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      const queueName = this.queueName(name);
      queue = new Queue(queueName, {
        connection: this.producerConnection,
        prefix: bullKeyPrefix(queueName, this.cluster),
      });
      queue.on('error', (err: Error) => this.logger?.warn({ err: err.message, queue: name }, 'job queue error'));
      this.queues.set(name, queue);
    }
    return queue;
  }
}

interface Pending {
  data: unknown;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * BullMQ OSS has no batch API: the worker runs up to batchSize × concurrency jobs at once, and
 * each job's processor parks in an accumulator that is handed to the handler when full or
 * after batchWaitMs. Every job of a batch settles with the handler's outcome.
 */
class BullConsumer implements Consumer {
  private readonly worker: Worker;
  private readonly batchSize: number;
  private readonly batchWaitMs: number;
  private accumulator: Pending[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private urged = false;
  /** Batches handed to the handler and not yet settled: close() waits for them without a bound. */
  private readonly running = new Set<Promise<void>>();

  constructor(
    readonly queueName: string,
    connection: RedisConnection,
    prefix: string,
    private readonly handler: JobHandler<JobName>,
    options: ConsumeOptions,
    timing: { lockDuration?: number; stalledInterval?: number },
    private readonly logger?: Logger,
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 1);
    this.batchWaitMs = options.batchWaitMs ?? 50;
    const concurrency = this.batchSize * Math.max(1, options.concurrency ?? 1);
    const { lockDuration, stalledInterval } = timing;
    this.worker = new Worker(queueName, (job: Job) => this.collect(job), {
      connection,
      prefix,
      concurrency,
      ...(lockDuration === undefined ? {} : { lockDuration }),
      ...(stalledInterval === undefined ? {} : { stalledInterval }),
    });
    this.worker.on('error', (err: Error) => logger?.warn({ err: err.message, queue: queueName }, 'job worker error'));
    this.worker.on('failed', (job, err) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
        logger?.error({ err, queue: queueName, jobId: job.id, attempts: job.attemptsMade }, 'job failed for good');
      }
    });
  }

  ready(): Promise<void> {
    return this.worker.waitUntilReady().then(() => undefined);
  }

  async close(): Promise<void> {
    // Hand over what is parked now rather than after the wait; the worker fetches nothing more.
    this.flush();
    const closed = this.worker.close();
    while (this.running.size > 0 || this.accumulator.length > 0) {
      this.flush();
      await Promise.allSettled([...this.running]);
    }
    if ((await settleWithin(closed, WORKER_CLOSE_MS)) === 'late')
      this.logger?.warn({ queue: this.queueName, boundMs: WORKER_CLOSE_MS }, 'job worker did not close in time; left');
  }

  /** A barrier is waiting: hand over what is parked now (once per turn, however many ask). */
  urge(): void {
    if (this.urged || this.accumulator.length === 0) return;
    this.urged = true;
    setImmediate(() => {
      this.urged = false;
      this.flush();
    });
  }

  private collect(job: Job): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.accumulator.push({ data: job.data, resolve, reject });
      if (this.accumulator.length >= this.batchSize) this.flush();
      else this.flushTimer ??= setTimeout(() => this.flush(), this.batchWaitMs);
    });
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.accumulator.splice(0, this.batchSize);
    if (batch.length === 0) return;
    const settled: Promise<void> = Promise.resolve()
      .then(() => this.handler(batch.map((p) => p.data) as GatewayJobs[JobName][]))
      .then(
        () => batch.forEach((p) => p.resolve()),
        (err: unknown) => {
          if (err instanceof JobBatchFailures) {
            batch.forEach((p, index) => {
              const failure = err.failures.get(index);
              if (failure) p.reject(failure);
              else p.resolve();
            });
            return;
          }
          // BullMQ records failures as Errors.
          batch.forEach((p) => p.reject(err instanceof Error ? err : new Error(String(err))));
        },
      );
    this.running.add(settled);
    void settled.finally(() => this.running.delete(settled));
  }
}
