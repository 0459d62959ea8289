import { sql } from 'kysely';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { migrateToLatest } from './migrate.js';
import { openDatabase } from './connection.js';
import { openTestDatabase, seedEmbeddedDataDir, testBackends } from './testing.js';

describe('testBackends', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('adds postgres only when TEST_DATABASE_URL is set', () => {
    vi.stubEnv('TEST_DATABASE_URL', '');
    expect(testBackends()).toEqual(['pglite']);
    vi.stubEnv('TEST_DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres');
    expect(testBackends()).toEqual(['pglite', 'postgres']);
  });
});

describe.each(testBackends())('openTestDatabase(%s)', (backend) => {
  it('gives each caller its own migrated database', async () => {
    const [a, b] = await Promise.all([openTestDatabase(backend), openTestDatabase(backend)]);
    try {
      await a.db
        .insertInto('users')
        .values({ id: 'u1', email: 'a@example.com', password_hash: 'h', roles: [] })
        .execute();
      expect(await a.db.selectFrom('users').select('id').execute()).toEqual([{ id: 'u1' }]);
      expect(await b.db.selectFrom('users').select('id').execute()).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('a PGlite test database', () => {
  it('is loaded from the migrated image shared on disk, and needs no migration of its own', async () => {
    const handle = await openTestDatabase('pglite');
    try {
      expect(
        readdirSync(join(tmpdir(), 'agentgw-pglite-images')).filter((f) => /^[0-9a-f]{32}\.tar$/.test(f)).length,
      ).toBeGreaterThan(0);
      expect(await migrateToLatest(handle.db)).toEqual([]);
    } finally {
      await handle.close();
    }
  });
});

describe('seedEmbeddedDataDir', () => {
  it('gives a new data directory a migrated database that a file: gateway opens as is, and leaves an existing one alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-seed-'));
    try {
      const pgdata = join(dir, 'pgdata');
      await seedEmbeddedDataDir(pgdata);
      const handle = await openDatabase({ url: `file:${pgdata}` });
      try {
        expect(await migrateToLatest(handle.db)).toEqual([]);
        await handle.db
          .insertInto('users')
          .values({ id: 'kept', email: 'kept@example.com', password_hash: 'h', roles: [] })
          .execute();
      } finally {
        await handle.close();
      }
      await seedEmbeddedDataDir(pgdata);
      const again = await openDatabase({ url: `file:${pgdata}` });
      try {
        expect(await again.db.selectFrom('users').select('id').execute()).toEqual([{ id: 'kept' }]);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(testBackends().includes('postgres'))('a PostgreSQL test database', () => {
  it('is a database of its own on the server, dropped by close()', async () => {
    const handle = await openTestDatabase('postgres');
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(handle.db);
    const name = rows[0]!.name;
    expect(name).toMatch(/^agentgw_t_[0-9a-f]{16}$/);

    await handle.close();
    const server = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await server.connect();
    try {
      const left = await server.query('select 1 from pg_database where datname = $1', [name]);
      expect(left.rowCount).toBe(0);
    } finally {
      await server.end();
    }
  });
});
