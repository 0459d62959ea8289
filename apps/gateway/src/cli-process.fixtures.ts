import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Test-only: drives the real `gateway` binary (and service main.ts files) as child processes. */
export const GATEWAY_BIN = fileURLToPath(new URL('../bin/gateway.mjs', import.meta.url));
/** The same CLI as `pnpm start` runs it, bundled (built by the suite's global setup): what most process tests spawn. */
export const GATEWAY_BUNDLE = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** Only what a shell user would have: no inherited NODE_ENV=test, secrets or test URLs. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...extra };
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function run(
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number; command?: string },
): Promise<Finished> {
  const child = spawn(options.command ?? process.execPath, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return finished(child, options.timeoutMs ?? 60_000);
}

function finished(child: ChildProcess, timeoutMs: number): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`process did not exit in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      // let the pipes drain
      setImmediate(() => resolve({ code, stdout, stderr }));
    });
  });
}

export interface Server {
  port: number;
  output(): string;
  /**
   * `signal` (SIGTERM by default) to the process, or with `group` to its whole process group as
   * a terminal's Ctrl-C does (needs `detached`), then the exit result (graceful shutdown exits 0).
   */
  stop(signal?: NodeJS.Signals, options?: { group?: boolean }): Promise<Finished>;
}

/**
 * Starts a long-running process (node with `args`, or `command`) and waits until `ready` matches
 * its stdout; the first group is the port. `detached` puts it in a process group of its own.
 */
/** How long a started gateway may take to say it is ready: a bound for a hang, not slowness (a busy CI machine took over 60 s). */
const START_BOUND_MS = 150_000;

export function startGatewayProcessUnderTest(
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    ready: RegExp;
    timeoutMs?: number;
    command?: string;
    detached?: boolean;
  },
): Promise<Server> {
  const child = spawn(options.command ?? process.execPath, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<Finished>((resolve) => {
    child.on('exit', (code) => setImmediate(() => resolve({ code, stdout: out, stderr: '' })));
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready in time:\n${out}`));
    }, options.timeoutMs ?? START_BOUND_MS);
    const check = () => {
      const match = options.ready.exec(out);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve({
        port: Number(match[1]),
        output: () => out,
        stop: async (signal = 'SIGTERM', { group = false } = {}) => {
          if (child.exitCode === null) {
            if (group) process.kill(-child.pid!, signal);
            else child.kill(signal);
          }
          return exited;
        },
      });
    };
    child.stdout.on('data', check);
    void exited.then((r) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${r.code} before it was ready:\n${out}`));
    });
  });
}
