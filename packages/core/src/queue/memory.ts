import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock.js';
import type { GatewayJobs, JobName } from '../jobs.js';
import type { Logger } from '../logger.js';
import type { ConsumeOptions, Consumer, EnqueueOptions, JobHandler, JobQueue } from './job-queue.js';
import { MemoryConsumer, type Barrier, type Job, type Lane, type Outcome } from './memory-consumer.js';

export interface MemoryJobQueueOptions {
  /** First retry delay; each further retry doubles it (default 1000). */
  backoffMs?: number;
  /** Time of delays and retries. With a ManualClock, delayed jobs fire once the clock is moved past them. */
  clock?: Clock;
  logger?: Logger;
  /**
   * The most JSON (in characters) a lane holds in jobs not yet settled (default
   * DEFAULT_MAX_LANE_CHARS). Past it `enqueue` waits until jobs settle, so producers slow to their
   * consumer's pace instead of piling jobs up in memory; a job larger than the bound enters an
   * empty lane.
   */
  maxLaneChars?: number;
}

/** 16 Mi characters of JSON per lane: many audit groups (each at most 1 MiB) ahead of the writer, no unbounded backlog. */
export const DEFAULT_MAX_LANE_CHARS = 16 * 1024 * 1024;

/** How often due delayed jobs are looked for under a clock other than the system's (moved by hand in tests). */
const TICK_MS = 20;

/** The longest single timer (Node's limit is ~24.8 days); a later job is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * In-process JobQueue for the all-in-one: same contract as BullMQ (dedupe, delays, retries with
 * exponential backoff, batches) but jobs live in memory and die with the process.
 */
export class MemoryJobQueue implements JobQueue {
  private readonly lanes = new Map<JobName, Lane>();
  private readonly backoffMs: number;
  private readonly clock: Clock;
  private readonly logger?: Logger;
  private readonly maxLaneChars: number;
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (Date.now() time). */
  private timerDue = Infinity;
  private closed = false;

  constructor(options: MemoryJobQueueOptions = {}) {
    this.backoffMs = options.backoffMs ?? 1000;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger;
    this.maxLaneChars = options.maxLaneChars ?? DEFAULT_MAX_LANE_CHARS;
  }

  async enqueue<J extends JobName>(name: J, data: GatewayJobs[J], options: EnqueueOptions = {}): Promise<void> {
    if (this.closed) throw new Error('job queue is closed');
    const lane = this.lane(name);
    const id = options.jobId ?? randomUUID();
    if (lane.jobs.has(id)) return;
    const payload = payloadOf(data, options.handOver);
    const chars = payload.kind === 'json' ? payload.json.length : options.handOver!.chars;
    // Oldest first: a new job waits behind those already waiting, even if it would fit.
    if (lane.room.length > 0 || !fits(lane, chars, this.maxLaneChars)) {
      const admitted = await new Promise<boolean>((wake) => lane.room.push({ chars, wake }));
      if (!admitted || this.closed) throw new Error('job queue is closed');
      if (lane.jobs.has(id)) return this.giveBack(lane, chars);
    } else lane.chars += chars;
    const job: Job = {
      id,
      seq: ++lane.seq,
      payload,
      chars,
      attempts: Math.max(1, options.attempts ?? 5),
      attemptsMade: 0,
      runAt: 0,
      state: 'waiting',
    };
    lane.jobs.set(id, job);
    if (options.delayMs && options.delayMs > 0) this.delay(lane, job, options.delayMs);
    else this.ready(lane, job);
  }

  async cancel(name: JobName, jobId: string): Promise<void> {
    const lane = this.lanes.get(name);
    const job = lane?.jobs.get(jobId);
    // An active job is already in a handler's hands, as with BullMQ's locked jobs.
    if (!lane || !job || job.state === 'active') return;
    this.forget(lane, job);
    lane.delayed.delete(job);
    const at = lane.waiting.indexOf(job);
    if (at >= 0) lane.waiting.splice(at, 1);
    this.releaseBarriers(lane);
  }

  async barrier(names: readonly JobName[], timeoutMs: number): Promise<boolean> {
    const marks = names.flatMap((name) => {
      const lane = this.lanes.get(name);
      return lane ? [{ lane, seq: lane.seq }] : [];
    });
    const waits = marks.filter(({ lane, seq }) => progressThrough(lane, seq) === 'pending');
    const settled = () => marks.every(({ lane, seq }) => progressThrough(lane, seq) === 'settled');
    if (waits.length === 0) return settled();
    let timer: NodeJS.Timeout | undefined;
    const barriers: [Lane, Barrier][] = [];
    const released = Promise.all(
      waits.map(
        ({ lane, seq }) =>
          new Promise<true>((resolve) => {
            const barrier = { seq, release: () => resolve(true) };
            lane.barriers.add(barrier);
            barriers.push([lane, barrier]);
            // Consumers now see a waiting barrier and hand over what they hold.
            for (const consumer of lane.consumers) consumer.pump();
          }),
      ),
    ).then(settled);
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([released, late]);
    } finally {
      clearTimeout(timer);
      for (const [lane, barrier] of barriers) lane.barriers.delete(barrier);
    }
  }

  async consume<J extends JobName>(name: J, handler: JobHandler<J>, options: ConsumeOptions = {}): Promise<Consumer> {
    if (this.closed) throw new Error('job queue is closed');
    const lane = this.lane(name);
    const consumer = new MemoryConsumer(
      lane,
      options,
      (jobs) => handler(jobs.map(dataOf) as GatewayJobs[J][]),
      (jobs, outcome) => this.settle(name, lane, jobs, outcome),
    );
    lane.consumers.add(consumer);
    consumer.pump();
    return consumer;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([...this.lanes.values()].flatMap((lane) => [...lane.consumers].map((c) => c.close())));
    // Enqueues waiting for room wake to find the queue closed.
    for (const lane of this.lanes.values()) for (const wait of lane.room.splice(0)) wait.wake(false);
    this.lanes.clear();
  }

  private lane(name: JobName): Lane {
    let lane = this.lanes.get(name);
    if (!lane) {
      lane = {
        jobs: new Map(),
        waiting: [],
        delayed: new Set(),
        consumers: new Set(),
        seq: 0,
        barriers: new Set(),
        chars: 0,
        room: [],
      };
      this.lanes.set(name, lane);
    }
    return lane;
  }

  private ready(lane: Lane, job: Job): void {
    job.state = 'waiting';
    lane.waiting.push(job);
    for (const consumer of lane.consumers) consumer.pump();
  }

  private delay(lane: Lane, job: Job, ms: number): void {
    job.state = 'delayed';
    job.runAt = this.clock.now().getTime() + ms;
    lane.delayed.add(job);
    this.arm(ms);
  }

  private settle(name: JobName, lane: Lane, jobs: Job[], outcome: Outcome): void {
    for (const job of jobs) {
      job.attemptsMade += 1;
      if (outcome.ok) {
        this.forget(lane, job);
      } else if (job.attemptsMade >= job.attempts) {
        this.forget(lane, job);
        this.logger?.error(
          { err: outcome.err, queue: name, jobId: job.id, attempts: job.attemptsMade },
          'job failed for good',
        );
      } else {
        this.delay(lane, job, this.backoffMs * 2 ** (job.attemptsMade - 1));
      }
    }
    this.releaseBarriers(lane);
  }

  /** A job leaves the lane (settled or cancelled): its room goes to the enqueues waiting for it. */
  private forget(lane: Lane, job: Job): void {
    lane.jobs.delete(job.id);
    this.giveBack(lane, job.chars);
  }

  /** Frees room and admits the enqueues waiting for it, oldest first, while each fits (one wake per admitted job). */
  private giveBack(lane: Lane, chars: number): void {
    lane.chars -= chars;
    while (lane.room.length > 0 && fits(lane, lane.room[0]!.chars, this.maxLaneChars)) {
      const wait = lane.room.shift()!;
      lane.chars += wait.chars;
      wait.wake(true);
    }
  }

  private releaseBarriers(lane: Lane): void {
    for (const barrier of lane.barriers) {
      if (progressThrough(lane, barrier.seq) !== 'pending') {
        lane.barriers.delete(barrier);
        barrier.release();
      }
    }
  }

  /**
   * Makes sure the scheduler wakes within `ms`: on the system clock one timer for the soonest
   * delayed job (an hourly job wakes the process hourly, not 50 times a second); under another
   * clock every TICK_MS, since it may be moved by hand.
   */
  private arm(ms: number): void {
    if (this.closed) return;
    const wait = Math.max(0, Math.min(ms, this.clock === systemClock ? MAX_TIMER_MS : TICK_MS));
    const due = Date.now() + wait;
    if (this.timer && this.timerDue <= due) return;
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => this.tick(), wait);
    // An in-process queue must not keep a process alive on its own.
    this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    const now = this.clock.now().getTime();
    let next = Infinity;
    for (const lane of this.lanes.values()) {
      const due = [...lane.delayed].filter((j) => j.runAt <= now).sort((a, b) => a.runAt - b.runAt);
      for (const job of due) {
        lane.delayed.delete(job);
        this.ready(lane, job);
      }
      for (const job of lane.delayed) next = Math.min(next, job.runAt - now);
    }
    if (next !== Infinity) this.arm(next);
  }
}

/** How a job's data is kept: a JSON copy, or (handed over) the value itself, its top level frozen. */
function payloadOf(data: unknown, handOver: EnqueueOptions['handOver']): Job['payload'] {
  if (handOver === undefined) return { kind: 'json', json: JSON.stringify(data) };
  return { kind: 'handed-over', data: Object.freeze(data) };
}

/** What a handler gets: a fresh copy of a JSON job each attempt, or the handed-over value. */
const dataOf = (job: Job): unknown => (job.payload.kind === 'json' ? JSON.parse(job.payload.json) : job.payload.data);

/** Whether a job of `chars` may join the lane now; an empty lane takes any job, so one larger than the bound still runs. */
function fits(lane: Lane, chars: number, max: number): boolean {
  return lane.chars === 0 || lane.chars + chars <= max;
}

/**
 * Where the lane's jobs up to `seq` stand: all gone (`settled`), some waiting or in a handler
 * (`pending`), or only delayed ones left (`delayed`: retrying, not due). The Map holds jobs in
 * `seq` order, so the walk stops at the first later one.
 */
function progressThrough(lane: Lane, seq: number): 'settled' | 'pending' | 'delayed' {
  let delayed = false;
  for (const job of lane.jobs.values()) {
    if (job.seq > seq) break;
    if (job.state !== 'delayed') return 'pending';
    delayed = true;
  }
  return delayed ? 'delayed' : 'settled';
}
