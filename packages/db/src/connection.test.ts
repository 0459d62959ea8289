import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './connection.js';
import { MIGRATION_NAMES } from './migrations/index.js';
import { DatabaseLockedError } from './file-lock.js';
import { migrateToLatest } from './migrate.js';
import { openTestDatabase, testBackends } from './testing.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe.each(testBackends())('a %s handle', (backend) => {
  it('pings while open and not after close, and closes twice without error', async () => {
    const handle = await openTestDatabase(backend);
    expect(handle.kind).toBe(backend);
    expect(await handle.ping()).toBe(true);
    await handle.close();
    await handle.close();
    expect(await handle.ping()).toBe(false);
  });
});

describe('openDatabase', () => {
  it('opens an in-memory PGlite for memory://', async () => {
    const handle = await openDatabase({ url: 'memory://' });
    try {
      expect(handle.kind).toBe('pglite');
      expect(await migrateToLatest(handle.db)).toEqual(MIGRATION_NAMES);
    } finally {
      await handle.close();
    }
  });

  it('rejects other schemes without echoing the URL', async () => {
    const err = await openDatabase({ url: 'mysql://root:hunter2@db/x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('DATABASE_URL must start with file:, postgres:// or postgresql://');
    await expect(openDatabase({ url: 'file:' })).rejects.toThrow(/needs a path/);
  });

  it('reports an unreachable PostgreSQL through ping instead of throwing', async () => {
    const handle = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/none' });
    try {
      expect(handle.kind).toBe('postgres');
      expect(await handle.ping()).toBe(false);
    } finally {
      await handle.close();
    }
  });
});

describe('a file: database', () => {
  let dir: string;
  let child: ChildProcess | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentgw-db-'));
  });
  afterEach(() => {
    child?.kill('SIGKILL');
    child = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('lives under <dataDir>/pgdata by default, admits one opener, and keeps its data across close and reopen', async () => {
    const first = await openDatabase({ dataDir: dir });
    await migrateToLatest(first.db);
    await first.db
      .insertInto('users')
      .values({ id: 'u1', email: 'a@example.com', password_hash: 'h', roles: [] })
      .execute();
    expect(existsSync(join(dir, 'pgdata', 'gateway.lock'))).toBe(true);
    const second = await openDatabase({ dataDir: dir }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(DatabaseLockedError);
    expect((second as Error).message).toContain(
      `The database at ${join(dir, 'pgdata')} is in use by another process (PID ${process.pid})`,
    );
    await first.close();
    expect(existsSync(join(dir, 'pgdata', 'gateway.lock'))).toBe(false);

    const again = await openDatabase({ url: `file:${join(dir, 'pgdata')}` });
    try {
      expect(await migrateToLatest(again.db)).toEqual([]);
      expect(await again.db.selectFrom('users').select('email').execute()).toEqual([{ email: 'a@example.com' }]);
    } finally {
      await again.close();
    }
  });

  it('is refused while another live process holds it, and taken over once that process is killed', async () => {
    const path = join(dir, 'db');
    const script = `
      import { openDatabase } from ${JSON.stringify(join(packageDir, 'src/connection.ts'))};
      await openDatabase({ url: ${JSON.stringify(`file:${path}`)} });
      console.log('ready');
      setInterval(() => {}, 60_000);`;
    const holder = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: packageDir,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child = holder;
    const [ready] = (await once(holder.stdout, 'data')) as [Buffer];
    expect(ready.toString()).toContain('ready');

    const err = await openDatabase({ url: `file:${path}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseLockedError);
    expect(err).toMatchObject({ path, pid: holder.pid });
    expect((err as Error).message).toContain(
      `The database at ${path} is in use by another process (PID ${holder.pid})`,
    );

    // SIGKILL: no chance to clean up, so the lock file stays behind with a dead PID.
    holder.kill('SIGKILL');
    await once(holder, 'exit');
    expect(readFileSync(join(path, 'gateway.lock'), 'utf8').trim()).toBe(String(holder.pid));
    const handle = await openDatabase({ url: `file:${path}` });
    try {
      expect(readFileSync(join(path, 'gateway.lock'), 'utf8').trim()).toBe(String(process.pid));
      expect(await handle.ping()).toBe(true);
    } finally {
      await handle.close();
    }
  });
});
