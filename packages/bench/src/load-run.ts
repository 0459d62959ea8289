import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Target } from './bench-cases.js';
import { cpuSeconds } from './process-stats.js';

const LOAD_SCRIPT = join(fileURLToPath(new URL('.', import.meta.url)), 'load.ts');

/** What one autocannon run measured (`load.ts` prints it as one JSON line). */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

/** One run of `t`'s request at `connections` for `seconds`, in a process of its own (the load generator's CPU is not the measured one's). */
export async function runLoad(t: Target, connections: number, seconds: number): Promise<LoadResult> {
  const args = [LOAD_SCRIPT, t.url, String(connections), String(seconds), JSON.stringify(t.headers), t.body];
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  await once(child, 'exit');
  return JSON.parse(line) as LoadResult;
}

/** One measured window: a run of `t`'s request and the CPU seconds `pids` used over it. */
export interface CpuWindow {
  load: LoadResult;
  cpu: number;
}

/** A run of `t`'s request with `pids`' CPU read around it: the one way every side's CPU per call is measured. */
export async function cpuOver(
  t: Target,
  pids: readonly number[],
  connections: number,
  seconds: number,
): Promise<CpuWindow> {
  const before = cpuSeconds(pids);
  const load = await runLoad(t, connections, seconds);
  return { load, cpu: cpuSeconds(pids) - before };
}
