import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { processTree, statFields } from '@agentgw/core/process-tree';

// The process tree is core's (testkit's listener check walks it too); the bench's callers take it from here.
export { processTree };

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** utime + stime in clock ticks from a stat file's fields after the name: state(0) ppid(1) … utime(11) stime(12). */
const ticksOf = (fields: string[] | null) => (fields ? Number(fields[11]) + Number(fields[12]) : 0);

/** User + system CPU seconds these processes have used so far (utime + stime). */
export function cpuSeconds(pids: readonly number[]): number {
  return pids.reduce((ticks, pid) => ticks + ticksOf(statFields(pid)), 0) / TICKS_PER_SECOND;
}

/** CPU seconds (utime + stime) per live thread of one process, by thread id: where inside the process the time goes. */
export function threadCpuSeconds(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    const fields = statFields(`${pid}/task/${tid}`);
    if (fields) threads.set(Number(tid), ticksOf(fields) / TICKS_PER_SECOND);
  }
  return threads;
}

/** Resident memory of one process in bytes (VmRSS), 0 when it is gone. */
export function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** What `settledResidentBytes` read: the lowest reading, when it was taken, and whether memory fell at all. */
export interface SettledResidentBytes {
  bytes: number;
  afterMs: number;
  /** False when no reading fell below the first within `maxMs`: `bytes` may still hold start-up garbage. */
  fell: boolean;
}

/**
 * The processes' resident memory once it stops falling: read every `everyMs` until a fall was seen
 * and no reading in `steadyMs` after it was lower than the lowest before, at most `maxMs`. A node
 * process keeps its start-up garbage and grown young generation until V8's memory reducer runs,
 * some 10–30 s after the process went quiet, so a reading at once overstates what it holds idle;
 * and waiting only for `steadyMs` without a fall ended some runs before the reducer had run (a
 * "settled" figure 30 MB above the same build's other runs, read 0 s after the first).
 */
export async function settledResidentBytes(
  pids: readonly number[],
  {
    everyMs = 1_000,
    steadyMs = 20_000,
    maxMs = 60_000,
    read = () => pids.reduce((sum, pid) => sum + residentBytes(pid), 0),
  }: { everyMs?: number; steadyMs?: number; maxMs?: number; read?: () => number } = {},
): Promise<SettledResidentBytes> {
  const started = Date.now();
  let lowest = read();
  let lowestAt = started;
  let fell = false;
  // Falling by less than 1 MiB is noise, not the reducer.
  while ((!fell || Date.now() - lowestAt < steadyMs) && Date.now() - started < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    const now = read();
    if (now < lowest - 1024 * 1024) {
      lowest = now;
      lowestAt = Date.now();
      fell = true;
    } else lowest = Math.min(lowest, now);
  }
  return { bytes: lowest, afterMs: lowestAt - started, fell };
}

/** Every live process whose command name is one of `names` (`postgres`, `redis-server`): servers the bench did not start. */
export function processesNamed(names: readonly string[]): number[] {
  const wanted = new Set(names);
  return readdirSync('/proc')
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && wanted.has(commandOf(pid)));
}

/** The command name of a process (`postgres`, `sh`, `esbuild`…): its main thread's name, which Node 24 sets to `MainThread`. */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Whether a process runs a Node binary, by its executable's file name, whatever its main thread is called (`node` up to Node 22, `MainThread` on 24). */
export function runsNode(pid: number): boolean {
  try {
    return basename(readlinkSync(`/proc/${pid}/exe`)) === basename(process.execPath);
  } catch {
    return false;
  }
}
