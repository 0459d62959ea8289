import type { ConsumeOptions, Consumer } from './job-queue.js';

// The in-process queue's lanes and their consumers (./memory.ts holds the queue itself).

/** A job in its lane: its data kept as JSON or handed over, where it stands, its attempts. */
export interface Job {
  id: string;
  /** Its place in the lane's history, for barriers. */
  seq: number;
  /** Kept as JSON so a handler gets a fresh copy each attempt, as from Redis; or the value itself when handed over (EnqueueOptions.handOver). */
  payload: { kind: 'json'; json: string } | { kind: 'handed-over'; data: unknown };
  /** Its JSON's length (the handed-over bound), against the lane's maxLaneChars. */
  chars: number;
  attempts: number;
  attemptsMade: number;
  runAt: number;
  state: 'waiting' | 'delayed' | 'active';
}

/** How a batch's handler ended. */
export type Outcome = { ok: true } | { ok: false; err: unknown };

/** A `barrier` call waiting for every job of a lane up to `seq` to settle. */
export interface Barrier {
  seq: number;
  release: () => void;
}

/** An enqueue waiting for room: its size, and what wakes it (`false`: the queue closed). */
export interface RoomWait {
  chars: number;
  wake: (admitted: boolean) => void;
}

/**
 * Everything about one job name: the jobs that exist (for dedupe; a Map keeps insertion order,
 * so its first job is the oldest unsettled one), the ready line, the consumers, the barriers.
 */
export interface Lane {
  jobs: Map<string, Job>;
  waiting: Job[];
  delayed: Set<Job>;
  consumers: Set<MemoryConsumer>;
  /** The last `seq` given. */
  seq: number;
  barriers: Set<Barrier>;
  /** JSON characters of the jobs in `jobs` (not yet settled), against maxLaneChars. */
  chars: number;
  /** Enqueues waiting for room, oldest first; each is woken with its characters already counted in `chars`. */
  room: RoomWait[];
}

/** One `consume` call: takes batches off its lane, at most `concurrency` at a time. */
export class MemoryConsumer implements Consumer {
  /** A batch's bound: so many jobs, or so many JSON characters of them (`ConsumeOptions.batchChars`). */
  private readonly bound: { per: 'job' | 'char'; max: number };
  private readonly batchWaitMs: number;
  private readonly concurrency: number;
  private readonly inFlight = new Set<Promise<void>>();
  private waitTimer: NodeJS.Timeout | undefined;
  /** Set when a partial batch has waited batchWaitMs and may be handed over. */
  private waited = false;
  private closed = false;

  constructor(
    private readonly lane: Lane,
    options: ConsumeOptions,
    private readonly run: (jobs: Job[]) => Promise<void>,
    private readonly settled: (jobs: Job[], outcome: Outcome) => void,
  ) {
    this.bound =
      options.batchChars === undefined
        ? { per: 'job', max: Math.max(1, options.batchSize ?? 1) }
        : { per: 'char', max: Math.max(1, options.batchChars) };
    this.batchWaitMs = options.batchWaitMs ?? 50;
    this.concurrency = Math.max(1, options.concurrency ?? 1);
  }

  pump(): void {
    const { waiting } = this.lane;
    while (!this.closed && this.inFlight.size < this.concurrency && waiting.length > 0) {
      // A barrier waiting on this lane wants what is here now, not a fuller batch later.
      const take = this.batchLength(waiting);
      if (take.full === false && !this.waited && this.lane.barriers.size === 0) {
        this.waitTimer ??= setTimeout(() => {
          this.waitTimer = undefined;
          this.waited = true;
          this.pump();
        }, this.batchWaitMs);
        return;
      }
      this.waited = false;
      clearTimeout(this.waitTimer);
      this.waitTimer = undefined;
      this.start(waiting.splice(0, take.jobs));
    }
  }

  /** How many of the waiting jobs the next batch takes, and whether that fills it. */
  private batchLength(waiting: readonly Job[]): { jobs: number; full: boolean } {
    const { per, max } = this.bound;
    if (per === 'job') return { jobs: Math.min(max, waiting.length), full: waiting.length >= max };
    // Stops at the bound, so a backlog is not walked whole; a job larger than the bound goes alone.
    let chars = 0;
    let jobs = 0;
    for (const job of waiting) {
      if (jobs > 0 && chars + job.chars > max) return { jobs, full: true };
      chars += job.chars;
      jobs++;
    }
    return { jobs, full: chars >= max };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.waitTimer);
    this.lane.consumers.delete(this);
    await Promise.all(this.inFlight);
  }

  private start(jobs: Job[]): void {
    for (const job of jobs) job.state = 'active';
    // Deferred so the handler never runs inside the producer's enqueue call.
    const done: Promise<void> = Promise.resolve()
      .then(() => this.run(jobs))
      .then(
        () => this.settled(jobs, { ok: true }),
        (err: unknown) => this.settled(jobs, { ok: false, err }),
      )
      .finally(() => {
        this.inFlight.delete(done);
        this.pump();
      });
    this.inFlight.add(done);
  }
}
