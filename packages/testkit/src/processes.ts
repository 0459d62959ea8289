import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '@agentgw/core/free-port';
import { listenerOwner } from './listener-owner.js';

/** How long a graceful stop may take before the process is killed (a hung shutdown is reported, not waited on). */
const STOP_GRACE_MS = 15_000;

// One implementation of a free loopback port for every test helper (core's cluster, db's PgBouncer, these processes).
export { freePort };

export interface ManagedProcess {
  name: string;
  pid: number;
  child: ChildProcess;
  /** The last 64 KiB the process printed (stdout and stderr), for failure messages. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  exited: Promise<number | string | null>;
  /** Sends `signal` to the process (its whole group when started detached) and waits for it to go. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Own process group, so stop() reaches wrappers' children too (e.g. `pnpm … start`). */
  detached?: boolean;
}

/**
 * A long-running child process whose output is kept for diagnostics; the test kills it by its
 * own PID (or process group), never by name.
 */
export function startProcess(options: StartProcessOptions): ManagedProcess {
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  if (child.pid === undefined) throw new Error(`${options.name}: could not spawn ${options.command}`);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-64 * 1024);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  const pid = child.pid;
  return {
    name: options.name,
    pid,
    child,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM') {
      const send = (sig: NodeJS.Signals) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        try {
          process.kill(options.detached ? -pid : pid, sig);
        } catch {
          // already gone
        }
      };
      send(signal);
      if (signal === 'SIGKILL') return void (await exited);
      // A graceful stop that hangs must not hang the suite's teardown: named on stderr, then killed.
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), STOP_GRACE_MS)));
      if ((await Promise.race([exited, hung])) === 'hung') {
        process.stderr.write(
          `${options.name} (pid ${pid}) did not exit ${STOP_GRACE_MS} ms after ${signal}: SIGKILL\n`,
        );
        send('SIGKILL');
      }
      clearTimeout(timer);
      await exited;
    },
  };
}

/** The port's /health answered from a process outside the one started: another process took the free port first. */
export class PortTakenError extends Error {
  constructor(
    processName: string,
    readonly port: number,
  ) {
    super(`${processName}: port ${port} was taken by another process before it could listen there`);
    this.name = 'PortTakenError';
  }
}

/**
 * Polls `url` until it answers 200 from `process_` (or a process it started); fails with the
 * process's output when it exits or time runs out, and with PortTakenError when another process
 * answers on the port.
 */
export async function waitForHealthy(url: string, process_: ManagedProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const port = Number(new URL(url).port);
  let exited = false;
  void process_.exited.then(() => (exited = true));
  for (;;) {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
    await res?.body?.cancel();
    if (res?.status === 200) {
      if (port > 0 && listenerOwner(port, process_.pid) === 'other') throw new PortTakenError(process_.name, port);
      return;
    }
    if (exited) throw new Error(`${process_.name} exited before it was healthy:\n${process_.output().slice(-3000)}`);
    if (Date.now() > deadline)
      throw new Error(`${process_.name} not healthy within ${timeoutMs} ms:\n${process_.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** How many free ports startOnFreePort tries before it gives up. */
const PORT_ATTEMPTS = 3;

/**
 * Why: a free port is only free until someone else binds it. Starts `start(port)` on a free port
 * and waits until it is healthy at `healthUrl(port)`; a port another process took in between is
 * given up (the process killed) for a new one. On any other failure the process is killed too.
 */
export async function startOnFreePort(
  start: (port: number) => ManagedProcess,
  healthUrl: (port: number) => string,
  timeoutMs: number,
): Promise<{ process: ManagedProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const started = start(port);
    try {
      await waitForHealthy(healthUrl(port), started, timeoutMs);
      return { process: started, port };
    } catch (error) {
      await started.stop('SIGKILL');
      if (!(error instanceof PortTakenError) || attempt === PORT_ATTEMPTS) throw error;
    }
  }
}
