import { threadCpuSeconds } from './process-stats.js';

/** CPU seconds per kind of thread of the gateway's server processes during one case. */
export interface ThreadCpu {
  /** The JavaScript main threads (thread id = process id): HTTP, routing, policy, audit. */
  main: number;
  /** The worker threads the probe reported: in the all-in-one, the embedded database. */
  workers: number;
  /** Everything else: libuv's pool (fs, crypto, dns), V8's GC and compiler helpers. */
  other: number;
}

/** Per-thread CPU seconds of several processes (process id → thread id → seconds). */
export type ThreadReadings = Map<number, Map<number, number>>;

/** Reads every thread's CPU time of these processes, to be compared with a later reading. */
export function readThreads(pids: readonly number[]): ThreadReadings {
  return new Map(pids.map((pid) => [pid, threadCpuSeconds(pid)]));
}

/** Splits what the threads used between two readings into main thread, worker threads and the rest; threads that ended in between are not counted. */
export function splitThreadCpu(
  before: ThreadReadings,
  after: ThreadReadings,
  workerThreads: ReadonlySet<number>,
): ThreadCpu {
  const split: ThreadCpu = { main: 0, workers: 0, other: 0 };
  for (const [pid, threads] of after) {
    for (const [tid, seconds] of threads) {
      const used = seconds - (before.get(pid)?.get(tid) ?? 0);
      if (tid === pid) split.main += used;
      else if (workerThreads.has(tid)) split.workers += used;
      else split.other += used;
    }
  }
  return split;
}
