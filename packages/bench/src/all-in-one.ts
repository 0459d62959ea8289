import { spawn } from 'node:child_process';
import { freePort } from '@agentgw/core/free-port';
import { benchProcessEnv, waitHealthy, type BenchProcessOptions, type GatewayUnderTest } from './gateway-under-test.js';
import { processTree, residentBytes, runsNode } from './process-stats.js';

export interface AllInOneOptions extends BenchProcessOptions {
  repo: string;
  /** The gateway's data directory: the same one again is a restart on the first boot's state. */
  dataDir: string;
}

/** Node processes of a tree that run the gateway's code (not the pnpm/tsx wrappers): the biggest by RSS. */
function serverOf(tree: number[]): number[] {
  const nodes = tree.filter(runsNode);
  const biggest = nodes.sort((a, b) => residentBytes(b) - residentBytes(a))[0];
  return biggest ? [biggest] : [];
}

/** Resolves once none of `pids` is alive, or false after `ms`. */
async function gone(pids: readonly number[], ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (pids.every((pid) => residentBytes(pid) === 0)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** Ends the start script's whole process group (pnpm, its shell, the server); it may be gone already. */
function endGroup(leader: number): void {
  try {
    process.kill(-leader, 'SIGTERM');
  } catch {
    // ESRCH: nothing of the group is left.
  }
}

/** The all-in-one as the README starts it: the gateway package's `start` script, in the given data directory. */
export async function startAllInOne(options: AllInOneOptions): Promise<GatewayUnderTest> {
  const port = await freePort();
  const child = spawn(
    'pnpm',
    ['--silent', '--filter', '@agentgw/gateway', 'run', 'start', '--port', String(port), '--data-dir', options.dataDir],
    {
      cwd: options.repo,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: options.dataDir,
        ...benchProcessEnv(options),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
      detached: true,
    },
  );
  const pids = () => processTree(child.pid!);
  const stop = async () => {
    // The server first (a CPU profile is written on a clean exit), then the wrappers.
    const tree = pids();
    for (const pid of serverOf(tree)) process.kill(pid, 'SIGTERM');
    if (!(await gone(tree, 15_000))) endGroup(child.pid!);
    await gone(tree, 15_000);
  };
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(base, () => child.exitCode === null);
  } catch (err) {
    endGroup(child.pid!);
    throw err;
  }
  return {
    name: 'all-in-one',
    base,
    pids,
    servers: () => serverOf(pids()),
    parts: () => [{ name: 'gateway', pids: pids() }],
    stop,
  };
}
