import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const HERE = fileURLToPath(new URL('.', import.meta.url));

/** A started helper: where it listens and its process, for the caller to end. */
export interface HelperProcess {
  port: number;
  pid: number;
  child: ChildProcess;
}

/**
 * Starts one of this package's helper scripts (an upstream, a bare proxy, the floor) under tsx
 * and resolves with its port once it prints its `{"port":N}` line. With `probe`, the event-loop
 * probe runs in it too (the upstreams' delay under direct load is the machine's baseline).
 */
export async function startHelper(
  file: string,
  args: readonly string[] = [],
  probe?: { module: string; dir: string },
): Promise<HelperProcess> {
  const child = spawn(
    process.execPath,
    [...(probe ? [`--import=${probe.module}`] : []), '--import', 'tsx', join(HERE, file), ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: probe ? { ...process.env, BENCH_PROBE_DIR: probe.dir } : process.env,
    },
  );
  try {
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    return { port: (JSON.parse(line) as { port: number }).port, pid: child.pid!, child };
  } catch (err) {
    child.kill('SIGTERM');
    throw err;
  }
}
