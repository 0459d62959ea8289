import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LOCK_FILE, SETTING_PARAMS } from './connection.js';
import { acquireFileLock } from './file-lock.js';

/**
 * Backup and restore of the embedded database (a `file:` data directory), for `gateway backup`
 * and `gateway restore`: PGlite's own archive of its data directory (gzipped tar). Both hold the
 * directory's lock, so neither runs beside a gateway using it (the lock's error names that
 * process); PostgreSQL deployments use pg_dump instead.
 */
export async function backupEmbeddedDatabase(path: string, archive: string): Promise<{ bytes: number }> {
  const dir = resolve(path);
  if (!existsSync(join(dir, 'PG_VERSION'))) throw new Error(`There is no embedded database at ${dir} to back up`);
  const lock = acquireFileLock(join(dir, LOCK_FILE), dir);
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, ...SETTING_PARAMS] });
    try {
      const bytes = Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
      writeFileSync(archive, bytes, { mode: 0o600, flag: 'wx' }); // never over an existing file
      return { bytes: bytes.length };
    } finally {
      await db.close();
    }
  } finally {
    lock.release();
  }
}

/** Unpacks `archive` into `path`, which must hold no database yet (restoring over one would lose it). */
export async function restoreEmbeddedDatabase(archive: string, path: string): Promise<void> {
  const dir = resolve(path);
  if (existsSync(join(dir, 'PG_VERSION'))) {
    throw new Error(`${dir} already holds a database; move it aside first (restore never overwrites one)`);
  }
  const data = new Blob([readFileSync(archive)]);
  mkdirSync(dir, { recursive: true });
  const lock = acquireFileLock(join(dir, LOCK_FILE), dir);
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create(dir, {
      loadDataDir: data,
      startParams: [...PGlite.defaultStartParams, ...SETTING_PARAMS],
    });
    await db.query('SELECT 1'); // the restored files open as a database
    await db.close();
  } finally {
    lock.release();
  }
}
