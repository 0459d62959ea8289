import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** The collections of one kind in a probe's window: how many, their total and longest pause (ms). */
export interface GcSeen {
  count: number;
  ms: number;
  maxMs: number;
}

/** What src/eventloop-probe.mjs writes on SIGUSR2: one process's event-loop delay window, its main thread's collections in it, memory and worker threads. */
export interface ProbeReport {
  pid: number;
  rss: number;
  memory: NodeJS.MemoryUsage;
  workerThreads: number[];
  delay: { p50: number; p99: number; max: number };
  gc: Partial<Record<'minor' | 'major' | 'incremental' | 'other', GcSeen>>;
}

/** Signals every probed process and reads what each wrote; each starts a new delay window. */
export async function readProbes(pids: readonly number[], probeDir: string): Promise<ProbeReport[]> {
  for (const f of readdirSync(probeDir)) rmSync(join(probeDir, f));
  for (const pid of pids) process.kill(pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 300));
  return readdirSync(probeDir).map((f) => JSON.parse(readFileSync(join(probeDir, f), 'utf8')) as ProbeReport);
}

/** The worst delay percentiles over several processes (the one that stalls is the one callers wait on). */
export function worstDelay(reports: readonly ProbeReport[]): { p50: number; p99: number; max: number } {
  return {
    p50: Math.max(0, ...reports.map((r) => r.delay.p50)),
    p99: Math.max(0, ...reports.map((r) => r.delay.p99)),
    max: Math.max(0, ...reports.map((r) => r.delay.max)),
  };
}
