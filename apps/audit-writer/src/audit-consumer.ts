import { JobBatchFailures, type Clock, type Consumer, type JobName, type JobQueue, type Logger } from '@agentgw/core';
import { isUniqueViolation, type Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { validateJob, type ValidJob } from './audit-job.js';
import { writeBatch } from './batch-writer.js';
import { pruneAudit, reclaimSpace, type PruneOutcome } from './retention.js';

export interface AuditConsumerOptions {
  db: Kysely<Database>;
  queue: JobQueue;
  clock: Clock;
  logger: Logger;
  batchSize: number;
  batchWaitMs: number;
  /** 0 disables retention. */
  retentionDays: number;
  /** Vacuum the audit tables after a retention run that deleted something: where nothing else does (the embedded engine). */
  reclaimAfterRetention?: boolean;
  /** Batches written at once (default 1): the next batch's upsert overlaps the previous one's commit. */
  concurrency?: number;
}

/** The queues whose jobs become audit rows (a producer's group of records per `audit-bulk` job): what the read barrier waits on. */
export const AUDIT_QUEUES = ['audit-bulk'] as const satisfies readonly JobName[];

/** A record's JSON as the in-process batch bound counts it (small calls ~1 KB, 2 KB bodies ~4.6 KB): `batchSize` records of this size. */
const RECORD_CHARS = 4096;

/** Retention runs once an hour; each run's job id names its hour, so replicas enqueue it once. */
export const RETENTION_INTERVAL_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** In-process retries of a batch while the database is briefly unreachable, before the queue's own backoff takes over. */
const TRANSIENT_RETRIES = [200, 1000, 3000];

/**
 * Errors worth retrying as they are: the database unreachable or restarting, a deadlock or
 * serialization failure, or another writer racing the same job key in. Anything else (a data
 * error) is a job's fault, and the batch is split to find it.
 */
export function isTransient(err: unknown): boolean {
  if (isUniqueViolation(err)) return true;
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (/^(08|53|57|40)/.test(code)) return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /connection terminated|connection refused|timeout exceeded when trying to connect|client has encountered a connection error|Connection terminated/i.test(
    message,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The writer's queue side: audit batches written in one transaction each, poison jobs failed
 * alone (with the reason logged), retention scheduled hourly.
 */
export function createAuditConsumer(options: AuditConsumerOptions) {
  const { db, queue, clock, logger } = options;
  const consumers: Consumer[] = [];

  async function writeWithRetries(jobs: readonly ValidJob[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await writeBatch(db, jobs);
        return;
      } catch (err) {
        const wait = TRANSIENT_RETRIES[attempt];
        if (!isTransient(err) || wait === undefined) throw err;
        logger.warn(
          { err: (err as Error).message, attempt: attempt + 1, jobs: jobs.length },
          'audit batch write failed; retrying',
        );
        await sleep(wait);
      }
    }
  }

  /**
   * Writes records in one transaction; when that fails for a data error, one by one to single
   * out the poison ones. Returns the poison records' reasons by index; throws when the database
   * is unavailable (every record is then retried).
   */
  async function writeRecords(records: readonly unknown[]): Promise<Map<number, Error>> {
    const failures = new Map<number, Error>();
    const valid: { index: number; job: ValidJob }[] = [];
    const jobs: ValidJob[] = [];
    // Loops, not callbacks made per batch: see batch-writer.ts on optimised code outliving a batch.
    for (let index = 0; index < records.length; index++) {
      const checked = validateJob(records[index]);
      if (!checked.ok) failures.set(index, new Error(checked.reason));
      else {
        valid.push({ index, job: checked.value });
        jobs.push(checked.value);
      }
    }
    try {
      await writeWithRetries(jobs);
    } catch (err) {
      if (isTransient(err)) throw err;
      for (const { index, job } of valid) {
        try {
          await writeWithRetries([job]);
        } catch (single) {
          if (isTransient(single)) throw single;
          failures.set(index, single instanceof Error ? single : new Error(String(single)));
        }
      }
    }
    for (const [index, err] of failures) {
      const record = records[index] as { id?: unknown; key?: unknown } | null;
      // The reason and the ids only: arguments and results stay out of the log.
      logger.error(
        { auditId: record?.id, jobKey: record?.key, reason: err.message },
        'poison audit record: not written',
      );
    }
    return failures;
  }

  /** A batch of `audit-bulk` jobs: their records are written together; a job fails with its poison records. */
  async function handleBulk(batch: readonly unknown[]): Promise<void> {
    const records: unknown[] = [];
    const owner: number[] = [];
    const failures = new Map<number, Error>();
    for (let index = 0; index < batch.length; index++) {
      const list = (batch[index] as { records?: unknown } | null)?.records;
      if (!Array.isArray(list)) {
        failures.set(index, new Error('invalid audit-bulk job: records must be an array'));
        logger.error({ reason: 'records must be an array' }, 'poison audit-bulk job: not written');
        continue;
      }
      for (const record of list) {
        records.push(record);
        owner.push(index);
      }
    }
    for (const [index, err] of await writeRecords(records)) {
      // Its good records are written; retries of the job skip them (same keys).
      const job = owner[index];
      if (job !== undefined && !failures.has(job)) failures.set(job, err);
    }
    if (failures.size > 0) throw new JobBatchFailures(failures);
  }

  /** Vacuums after a run that deleted something; best effort: the deletes stand, and the next run that deletes rows vacuums again. */
  async function reclaimAfter(outcome: PruneOutcome): Promise<boolean> {
    if (options.reclaimAfterRetention !== true || outcome.rows + outcome.links + outcome.placeholders === 0)
      return false;
    try {
      await reclaimSpace(db);
      return true;
    } catch (err) {
      logger.warn({ err }, 'audit retention: vacuum failed');
      return false;
    }
  }

  const slotOf = (ms: number) => Math.floor(ms / RETENTION_INTERVAL_MS);

  async function scheduleRetention(afterSlot: number): Promise<void> {
    const slot = afterSlot + 1;
    const delayMs = Math.max(0, slot * RETENTION_INTERVAL_MS - clock.now().getTime());
    await queue.enqueue('audit-retention', { slot }, { jobId: `audit-retention:${slot}`, delayMs, attempts: 3 });
  }

  return {
    /** The queue handler, exposed for the tests. */
    handleBulk,
    async start(): Promise<void> {
      const batching = {
        batchSize: options.batchSize,
        batchWaitMs: options.batchWaitMs,
        concurrency: options.concurrency ?? 1,
      };
      // A bulk job holds 1 to 500 records. BullMQ counts jobs: a hundredth of the batch size, for
      // the worst case of full jobs. The in-process queue sizes them, so many small jobs (a busy
      // gateway's: a few records each) fill one transaction instead of ten jobs cutting it short.
      consumers.push(
        await queue.consume('audit-bulk', (jobs) => handleBulk(jobs), {
          ...batching,
          batchSize: Math.max(1, Math.ceil(options.batchSize / 100)),
          batchChars: options.batchSize * RECORD_CHARS,
        }),
      );
      if (options.retentionDays > 0) {
        consumers.push(
          await queue.consume('audit-retention', async (jobs) => {
            const cutoff = new Date(clock.now().getTime() - options.retentionDays * DAY_MS);
            const outcome = await pruneAudit(db, cutoff);
            const reclaimed = await reclaimAfter(outcome);
            logger.info({ ...outcome, reclaimed, cutoff: cutoff.toISOString() }, 'audit retention run');
            await scheduleRetention(Math.max(...jobs.map((j) => j.slot)));
          }),
        );
        await scheduleRetention(slotOf(clock.now().getTime()));
      }
    },
    /** Stops taking jobs; a batch in hand is written (or released for redelivery) first. */
    async stop(): Promise<void> {
      await Promise.all(consumers.splice(0).map((c) => c.close()));
    },
  };
}
