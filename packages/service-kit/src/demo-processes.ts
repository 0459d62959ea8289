import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root (its node_modules has tsx); the child is node itself, so signals reach it. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEMO = fileURLToPath(new URL('./demo-service-process.ts', import.meta.url));

export interface DemoProcess {
  port: number;
  child: ChildProcess;
  /** Resolves with the exit code. */
  exit: Promise<number | null>;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
}

/** Starts `demo-service-process.ts` in a real process and waits until it listens (tests only). */
export async function startDemoProcess(env: Record<string, string>): Promise<DemoProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', DEMO], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`demo process did not start:\n${output}`));
    }, 150_000); // a PGlite database is created and migrated first; slow on a loaded machine
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
  return { port, child, exit, output: () => output };
}
