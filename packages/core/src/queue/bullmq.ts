import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { GatewayJobs, JobName } from '../jobs.js';
import type { Logger } from '../logger.js';
import { JobBatchFailures } from './batch-failures.js';
import type { ConsumeOptions, Consumer, EnqueueOptions, JobHandler, JobQueue } from './job-queue.js';

export interface BullJobQueueOptions {
  url: string;
  /** Queue names are `${prefix}-${jobName}` (default `agentgw`). */
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
}

/**
 * BullMQ ids may not be integers nor contain ':', while the port takes any string: an id is
 * stored as `id-` plus its URI encoding (':' becomes %3A), which is still unique per id.
 */
const bullJobId = (jobId: string): string => `id-${encodeURIComponent(jobId)}`;

/** How long and how many failed jobs stay in the failed set when an enqueuer asks to keep them. */
const KEEP_FAILED = { age: 14 * 24 * 3600, count: 10_000 };

/** JobQueue on BullMQ (Redis): durable, shared by every replica. */
export class BullJobQueue implements JobQueue {
  private readonly prefix: string;
  private readonly backoffMs: number;
  private readonly logger?: Logger;
  private readonly workerTiming: { lockDuration?: number; stalledInterval?: number };
  /** Producers fail fast-ish when Redis is gone; workers must retry forever (BullMQ requires it). */
  private readonly producerConnection: Redis;
  private readonly workerConnection: Redis;
  private readonly queues = new Map<JobName, Queue>();
  private readonly consumers = new Set<BullConsumer>();

  constructor(options: BullJobQueueOptions) {
    this.prefix = options.prefix ?? 'agentgw';
    this.backoffMs = options.backoffMs ?? 1000;
    this.logger = options.logger;
    this.workerTiming = { lockDuration: options.lockDurationMs, stalledInterval: options.stalledIntervalMs };
    this.producerConnection = new Redis(options.url);
    this.workerConnection = new Redis(options.url, { maxRetriesPerRequest: null });
    for (const [role, connection] of [['producer', this.producerConnection], ['worker', this.workerConnection]] as const) {
      connection.on('error', (err: Error) => this.logger?.warn({ err: err.message, role }, 'redis job queue connection error'));
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
  }

  async cancel(name: JobName, jobId: string): Promise<void> {
    // Returns 0 for an active (locked) job, which is left to finish.
    await this.queue(name).remove(bullJobId(jobId));
  }

  async consume<J extends JobName>(name: J, handler: JobHandler<J>, options: ConsumeOptions = {}): Promise<Consumer> {
    const consumer = new BullConsumer(this.queueName(name), this.workerConnection, handler as JobHandler<JobName>, options, this.workerTiming, this.logger);
    this.consumers.add(consumer);
    await consumer.ready();
    return consumer;
  }

  async close(): Promise<void> {
    // A consumer already closed by its owner closes again as a no-op.
    await Promise.all([...this.consumers].map((c) => c.close()));
    this.consumers.clear();
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
    await Promise.all(
      [this.producerConnection, this.workerConnection].map((c) => c.quit().catch(() => c.disconnect())),
    );
  }

  private queueName(name: JobName): string {
    return `${this.prefix}-${name}`;
  }

  private queue(name: JobName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(this.queueName(name), { connection: this.producerConnection });
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

  constructor(
    queueName: string,
    connection: Redis,
    private readonly handler: JobHandler<JobName>,
    options: ConsumeOptions,
    timing: { lockDuration?: number; stalledInterval?: number },
    logger?: Logger,
  ) {
    this.batchSize = Math.max(1, options.batchSize ?? 1);
    this.batchWaitMs = options.batchWaitMs ?? 50;
    const concurrency = this.batchSize * Math.max(1, options.concurrency ?? 1);
    const { lockDuration, stalledInterval } = timing;
    this.worker = new Worker(queueName, (job: Job) => this.collect(job), {
      connection,
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
    // Hand over what is parked now rather than after the wait; close() waits for active jobs.
    this.flush();
    await this.worker.close();
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
    Promise.resolve()
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
  }
}
