import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@agentgw/core/free-port';

/** A running PgBouncer in transaction pooling in front of one PostgreSQL server, for tests and the e2e. */
export interface LocalPgBouncer {
  /** `serverUrl` with its host and port swapped for the pooler's (same user, database, password). */
  urlFor(serverUrl: string): string;
  pid: number;
  stop(): Promise<void>;
}

const BINARY_DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin'];

function pgbouncerBinary(): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), ...BINARY_DIRS]) {
    if (dir && existsSync(join(dir, 'pgbouncer'))) return join(dir, 'pgbouncer');
  }
  return null;
}

/** Why PgBouncer cannot start here, or null. */
export function pgbouncerUnavailable(): string | null {
  return pgbouncerBinary() ? null : "pgbouncer not found (Debian's pgbouncer package)";
}

/**
 * Starts Debian's pgbouncer on a loopback port with its own config in a temp directory:
 * `pool_mode = transaction`, `default_pool_size = poolSize` server connections per database and
 * user (small, so clients share them and any session state would leak between them), every
 * database of `serverUrl`'s server, the client's user passed through (auth_type trust for the
 * users in the URL; the server does its own authentication). Stopped by its PID.
 */
export async function startLocalPgBouncer(serverUrl: string, poolSize = 2): Promise<LocalPgBouncer> {
  const server = new URL(serverUrl);
  const dir = await mkdtemp(join(tmpdir(), 'agentgw-pgbouncer-'));
  // Run as root (CI), pgbouncer drops to `nobody`, which must read its files.
  await chmod(dir, 0o755);
  const port = await freePort();
  const user = decodeURIComponent(server.username || 'postgres');
  const password = decodeURIComponent(server.password);
  const ini = [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || '5432'}${password ? ` password=${password}` : ''}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${poolSize}`,
    'max_client_conn = 500',
    'ignore_startup_parameters = extra_float_digits',
  ].join('\n');
  await writeFile(join(dir, 'pgbouncer.ini'), `${ini}\n`, { mode: 0o644 });
  await writeFile(join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  const args = [...(process.getuid?.() === 0 ? ['-u', 'nobody'] : []), join(dir, 'pgbouncer.ini')];
  const binary = pgbouncerBinary();
  if (binary === null) throw new Error('pgbouncer is not installed');
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-16_384));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!output.includes(`listening on 127.0.0.1:${port}`)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`pgbouncer has no process id:\n${output}`);
  return {
    urlFor(url) {
      const through = new URL(url);
      through.hostname = '127.0.0.1';
      through.port = String(port);
      return through.toString();
    },
    pid,
    stop,
  };
}
