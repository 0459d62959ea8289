import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { Migrator, type Kysely } from 'kysely';
import { openDatabase, openPglite, type DbHandle } from './connection.js';
import { migrateToLatest } from './migrate.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

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

/**
 * Runs migrations down until `name` is the last applied: a test's database as a release that
 * ended there left it, to write rows the way that release did and migrate them forward.
 */
export async function migrateDownTo(db: Kysely<Database>, name: string): Promise<void> {
  const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(name);
  if (error !== undefined) throw error instanceof Error ? error : new Error(String(error));
}

let pgliteImage: Promise<Blob> | undefined;

/**
 * Booting PGlite runs initdb and then the migrations (about 9 s of CPU); loading a data
 * directory dumped after doing that is several times faster. The dump is kept on disk under a
 * key of the migrations' sources and PGlite's build, so every test file and process shares one
 * (vitest re-imports this module per file; CI runs ~100 such files).
 */
function migratedPgliteImage(): Promise<Blob> {
  pgliteImage ??= (async () => {
    const file = join(tmpdir(), 'agentgw-pglite-images', `${await imageKey()}.tar`);
    const cached = await readFile(file).catch(() => undefined);
    if (cached) return new Blob([cached]);
    const image = await freshMigratedImage();
    await writeAtomically(file, Buffer.from(await image.arrayBuffer()));
    return image;
  })().catch((err: unknown) => {
    pgliteImage = undefined;
    throw err;
  });
  return pgliteImage;
}

async function freshMigratedImage(): Promise<Blob> {
  const pglite = new PGlite();
  const handle = await openPglite(pglite, () => {});
  try {
    await migrateToLatest(handle.db);
    return await pglite.dumpDataDir('none');
  } finally {
    await handle.close();
  }
}

/** Changes with any migration's source and with the installed PGlite (its path names its version). */
async function imageKey(): Promise<string> {
  const dir = fileURLToPath(new URL('./migrations/', import.meta.url));
  const hash = createHash('sha256').update(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (const name of (await readdir(dir)).sort()) hash.update(name).update(await readFile(join(dir, name)));
  return hash.digest('hex').slice(0, 32);
}

/** Processes racing to store the same image each rename a whole file into place; none reads half of one. */
async function writeAtomically(file: string, data: Buffer): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true });
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(partial, data);
  await rename(partial, file);
}

/**
 * Test-only: a gateway process a test spawns on this embedded data directory (`…/pgdata`) finds
 * it created and migrated, loaded from the shared image, so its start skips initdb and the
 * migrations (~8 s of CPU each, dozens of processes per CI run). A directory that holds a
 * database already is left alone; tests of a first start itself do not call this.
 */
export async function seedEmbeddedDataDir(path: string): Promise<void> {
  if (
    await access(join(path, 'PG_VERSION')).then(
      () => true,
      () => false,
    )
  )
    return;
  await mkdir(path, { recursive: true });
  const pglite = new PGlite(path, { loadDataDir: await migratedPgliteImage() });
  await pglite.waitReady;
  await pglite.close();
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
