import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { migrateToLatest, openDatabase, type DbHandle } from '@agentgw/db';
import { sql } from 'kysely';

/**
 * Real processes for the cross-replica test and the benchmark: confirmation-hub replicas run
 * the service's own main.ts, holders run held-call-server.ts, all on one PostgreSQL database
 * and one Redis.
 */
/** The repository root, whose node_modules has tsx; the child is node itself (with tsx's loader), so a signal reaches the service. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HOLDER_MAIN = fileURLToPath(new URL('./held-call-server.ts', import.meta.url));

export const TEST_SECRETS = {
  JWT_SECRET: 'cross-replica-jwt-secret-that-is-long-enough-0123',
  CREDENTIAL_ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  PLATFORM_SECRETS_KEY: '8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677',
};

export interface ScratchDatabase {
  url: string;
  handle: DbHandle;
  drop(): Promise<void>;
}

/** A new migrated database on `serverUrl`'s server, dropped by `drop()`. */
export async function createScratchDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `agentgw_hub_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const server = await openDatabase({ url: serverUrl });
    try {
      await sql.raw(statement).execute(server.db);
    } finally {
      await server.close();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ url: url.toString() });
  await migrateToLatest(handle.db);
  return {
    url: url.toString(),
    handle,
    async drop() {
      await handle.close();
      await admin(`drop database if exists ${name} with (force)`);
    },
  };
}

/** Redis URL on its own logical database, so this run's BullMQ queues meet nobody else's. */
export function isolatedRedisUrl(serverUrl: string, database: number): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export interface ReplicaProcess {
  port: number;
  url: string;
  child: ChildProcess;
  /** What the process printed lately (last 64 KiB), for diagnostics. */
  output(): string;
  /** SIGTERM (graceful) or SIGKILL (a crash); resolves when the process is gone. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

/** How long a replica may take to listen: a bound that catches a hang, not slowness (tsx compiling on a busy machine took over 30 s in CI). */
const START_BOUND_MS = 120_000;

function launch(
  file: string,
  env: Record<string, string>,
  ready: (line: string) => number | null,
): Promise<ReplicaProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...TEST_SECRETS, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not start:\n${output.slice(-2000)}`));
    }, START_BOUND_MS);
    const onLine = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-64 * 1024);
      for (const line of chunk.toString().split('\n')) {
        const port = ready(line);
        if (port !== null) {
          clearTimeout(timer);
          resolve({
            port,
            url: `http://127.0.0.1:${port}`,
            child,
            output: () => output,
            async stop(signal = 'SIGTERM') {
              if (child.exitCode === null && child.signalCode === null) child.kill(signal);
              await exited;
            },
          });
        }
      }
    };
    child.stdout.on('data', onLine);
    child.stderr.on('data', onLine);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited with ${code}:\n${output.slice(-2000)}`));
    });
  });
}

/** A service's own `apps/<app>/src/main.ts` with these variables; ready when it logs `listening`. */
export function startServiceUnderTest(app: string, env: Record<string, string>): Promise<ReplicaProcess> {
  const main = fileURLToPath(new URL(`../../${app}/src/main.ts`, import.meta.url));
  return launch(main, { LOG_LEVEL: 'info', ...env }, (line) => {
    if (!line.includes('"listening"')) return null;
    try {
      return (JSON.parse(line) as { port: number }).port;
    } catch {
      return null;
    }
  });
}

/** A confirmation-hub replica (its main.ts). */
export const startHub = (env: Record<string, string>): Promise<ReplicaProcess> =>
  startServiceUnderTest('confirmation-hub', env);

/** A process holding calls through the gate (held-call-server.ts). */
export function startHolder(env: Record<string, string>): Promise<ReplicaProcess> {
  return launch(HOLDER_MAIN, { LOG_LEVEL: 'warn', ...env }, (line) => {
    const match = /^listening (\d+)/.exec(line.trim());
    return match ? Number(match[1]) : null;
  });
}
