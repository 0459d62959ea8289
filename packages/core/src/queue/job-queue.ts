import type { GatewayJobs, JobName } from '../jobs.js';

export interface EnqueueOptions {
  /** Deduplication key: a second job with the same id is ignored while the first exists. */
  jobId?: string;
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number;
  /** Attempts before the job is given up (default 5, exponential backoff). */
  attempts?: number;
  /**
   * Keep a job that failed for good in BullMQ's failed set (14 days, newest 10,000) for
   * inspection instead of removing it; its id stays taken meanwhile. In-process: no effect.
   */
  keepFailed?: boolean;
  /**
   * The producer hands `data` over: it is JSON-safe (what a JSON round trip would give back),
   * nothing changes it or its parts afterwards (neither the producer nor any handler), and its
   * JSON is at most `chars` characters long. The in-process queue then keeps the value itself
   * instead of a JSON copy (a producer of many large jobs, the audit trail, paid a serialisation
   * and a parse per job for a copy nobody needed); BullMQ serialises it as always.
   */
  handOver?: { chars: number };
}

export interface ConsumeOptions {
  /** Hand the handler up to this many jobs at once (default 1). */
  batchSize?: number;
  /** How long to wait for a batch to fill before handing over what is there (default 50ms). */
  batchWaitMs?: number;
  /**
   * A batch's size in its jobs' JSON characters instead of their count, where the queue knows
   * them without serialising (in-process): full at this many, at least one job. A consumer of
   * jobs that vary in size (an audit group holds 1 to 500 records) then gets what the bound
   * means, not a count cut early by many small jobs. BullMQ counts `batchSize` jobs.
   */
  batchChars?: number;
  concurrency?: number;
}

/** A batch handler; throwing fails every job of the batch (or those of a JobBatchFailures), and each is retried. */
export type JobHandler<J extends JobName> = (jobs: GatewayJobs[J][]) => Promise<void>;

export interface Consumer {
  close(): Promise<void>;
}

/**
 * Durable typed jobs: at-least-once delivery, delayed jobs, retries with backoff, batch
 * consumption. Jobs enqueued before a consumer starts wait for it.
 */
export interface JobQueue {
  enqueue<J extends JobName>(name: J, data: GatewayJobs[J], options?: EnqueueOptions): Promise<void>;
  /** Removes a delayed or waiting job by its id (e.g. a timeout made moot). */
  cancel(name: JobName, jobId: string): Promise<void>;
  consume<J extends JobName>(name: J, handler: JobHandler<J>, options?: ConsumeOptions): Promise<Consumer>;
  /**
   * Read-your-writes: resolves true once every job of these queues enqueued (by any process)
   * before the call has settled (handled, or failed for good). Resolves false when `timeoutMs`
   * passes first (one still waiting, or in a dead worker's hands), or as soon as the only
   * earlier jobs left are delayed (retrying after a failure, or enqueued with a delay): they are
   * not due, and waiting for them would only slow every caller. While it waits, consumers hand
   * over partial batches at once instead of waiting out `batchWaitMs`. Immediate when nothing
   * earlier is pending.
   */
  barrier(names: readonly JobName[], timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}
