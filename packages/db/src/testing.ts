import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { openDatabase, openPglite, type DbHandle } from './connection.js';
import { migrateToLatest } from './migrate.js';

export type TestBackend = 'pglite' | 'postgres';

/** Backends database tests run against: always PGlite, plus PostgreSQL when TEST_DATABASE_URL is set. */
export function testBackends(): TestBackend[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

/**
 * A fresh, migrated database nobody else uses. PGlite: in memory. PostgreSQL: a new database
 * `agentgw_t_<random>` on TEST_DATABASE_URL's server, dropped by close().
 */
export async function openTestDatabase(backend: TestBackend = 'pglite'): Promise<DbHandle> {
  return backend === 'pglite' ? openPgliteTestDatabase() : openPostgresTestDatabase();
}

let pgliteImage: Promise<Blob> | undefined;

/**
 * Booting PGlite runs initdb and then the migrations; loading a data directory dumped after
 * doing that once per process is several times faster.
 */
function migratedPgliteImage(): Promise<Blob> {
  pgliteImage ??= (async () => {
    const pglite = new PGlite();
    const handle = await openPglite(pglite, () => {});
    try {
      await migrateToLatest(handle.db);
      return await pglite.dumpDataDir('none');
    } finally {
      await handle.close();
    }
  })().catch((err: unknown) => {
    pgliteImage = undefined;
    throw err;
  });
  return pgliteImage;
}

async function openPgliteTestDatabase(): Promise<DbHandle> {
  return openPglite(new PGlite({ loadDataDir: await migratedPgliteImage() }), () => {});
}

async function openPostgresTestDatabase(): Promise<DbHandle> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `agentgw_t_${randomBytes(8).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  const drop = () => admin(`drop database if exists ${name} with (force)`);

  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let handle: DbHandle | undefined;
  try {
    handle = await openDatabase({ url: url.toString() });
    await migrateToLatest(handle.db);
  } catch (err) {
    await handle?.close();
    await drop();
    throw err;
  }
  const { close } = handle;
  let closing: Promise<void> | undefined;
  return {
    ...handle,
    close: () => (closing ??= close().then(drop)),
  };
}
