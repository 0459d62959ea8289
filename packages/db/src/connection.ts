import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { acquireFileLock } from './file-lock.js';
import { openPgliteInWorker } from './pglite-worker.js';
import type { Database } from './schema.js';

/** Where the embedded database lives when DATABASE_URL is unset, relative to the working directory. */
export const DEFAULT_DATA_DIR = '.gateway-data';

/** Inside the database directory, so every process that can reach the data also sees the lock. */
export const LOCK_FILE = 'gateway.lock';
const PING_TIMEOUT_MS = 2_000;

export interface DbHandle {
  db: Kysely<Database>;
  kind: 'postgres' | 'pglite';
  /** True when the database answers a trivial query within a couple of seconds. */
  ping(): Promise<boolean>;
  /** Closes every connection and, for a file: database, releases its lock. Safe to call twice. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /**
   * `postgres://` / `postgresql://` (PostgreSQL), `file:<path>` (embedded PGlite persisted in
   * that directory, one process only), `memory://` (embedded, in memory: tests). Unset: the
   * embedded database under `dataDir`.
   */
  url?: string | undefined;
  /** Home of the default database (`<dataDir>/pgdata`); only used when `url` is unset. */
  dataDir?: string | undefined;
  /** PostgreSQL only: connections the pool keeps at most (pg's default, 10, when unset). */
  poolMax?: number | undefined;
}

export async function openDatabase({ url, dataDir, poolMax }: OpenDatabaseOptions = {}): Promise<DbHandle> {
  if (url === undefined) return openFile(resolve(dataDir ?? DEFAULT_DATA_DIR, 'pgdata'));
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url, poolMax);
  if (url.startsWith('file:')) return openFile(filePath(url));
  if (url === 'memory://') return openMemory();
  // The URL itself is left out: it may carry a password.
  throw new Error('DATABASE_URL must start with file:, postgres:// or postgresql://');
}

/**
 * pg hands int8 (count(*), sum()) back as a string while PGlite gives a number; make pg match
 * so services see one shape. Counts stay far below 2^53. Scoped to this pool, not pg globally.
 */
const pgTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 && format !== 'binary'
      ? Number
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * The embedded engine's server settings, sized for one gateway process: PostgreSQL's defaults
 * (128 MB of shared buffers and more) made a reopened database hold ~305 MB resident, these
 * ~180 MB (docs/benchmarks.md). The gateway's tables are small and its queries point lookups.
 */
export const PGLITE_SETTINGS = [
  'shared_buffers=8MB',
  'work_mem=1MB',
  'maintenance_work_mem=8MB',
  'temp_buffers=1MB',
  'wal_buffers=256kB',
  // The worker keeps statements prepared; without autovacuum's ANALYZE, a generic plan made while
  // a table was small (a sequential scan of audit_chain) would be kept as it grows. Plan each run.
  'plan_cache_mode=force_custom_plan',
];
// Start-up `-c` options after PGlite's defaults (not `postgresqlconf`, which would replace initdb's postgresql.conf and its timezone/locale lines).
export const SETTING_PARAMS = PGLITE_SETTINGS.flatMap((s) => ['-c', s]);

/**
 * A pg pool: parameterised queries go as unnamed prepared statements and nothing sets session
 * state, so it works unchanged through PgBouncer in transaction pooling (see the README).
 */
function openPostgres(url: string, poolMax: number | undefined): DbHandle {
  const pool = new pg.Pool({
    connectionString: url,
    types: pgTypes,
    connectionTimeoutMillis: 10_000,
    ...(poolMax === undefined ? {} : { max: poolMax }),
  });
  // An idle client whose server went away emits 'error' on the pool; unheard, it would kill the
  // process. The next query fails instead and ping() reports the outage.
  pool.on('error', () => {});
  return handle(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres', () => {});
}

async function openFile(path: string): Promise<DbHandle> {
  mkdirSync(path, { recursive: true });
  const lock = acquireFileLock(join(path, LOCK_FILE), path);
  try {
    if (!existsSync(join(path, 'PG_VERSION'))) await initialiseInWorker(path);
    const client = await openPgliteInWorker({
      pglite: import.meta.resolve('@electric-sql/pglite'),
      path,
      extraStartParams: SETTING_PARAMS,
    });
    // The dialect only calls query() and close(), which the worker client provides.
    return handle(
      new Kysely<Database>({ dialect: new PGliteDialect(client as unknown as PGlite) }),
      'pglite',
      lock.release,
    );
  } catch (err) {
    lock.release();
    throw err;
  }
}

/**
 * Creates a fresh data directory (initdb) in a worker thread that then exits: initdb's own
 * WebAssembly instance holds ~500 MB that the main thread would otherwise keep until some
 * later garbage collection; the worker's memory goes back when it ends.
 */
async function initialiseInWorker(path: string): Promise<void> {
  const worker = new Worker(
    // Plain JavaScript that runs as CommonJS or ESM alike (dynamic imports only).
    `import('node:worker_threads').then(async ({ workerData }) => {
       const { PGlite } = await import(workerData.pglite);
       const db = new PGlite(workerData.path, { startParams: [...PGlite.defaultStartParams, ...workerData.extraStartParams] });
       await db.waitReady;
       await db.close();
     });`,
    {
      eval: true,
      workerData: { pglite: import.meta.resolve('@electric-sql/pglite'), path, extraStartParams: SETTING_PARAMS },
    },
  );
  const [code] = await Promise.race([
    new Promise<[number]>((done) => worker.once('exit', (exitCode: number) => done([exitCode]))),
    new Promise<never>((_, fail) => worker.once('error', fail)),
  ]);
  if (code !== 0) throw new Error(`initialising the embedded database in ${path} failed (worker exit ${code})`);
}

/** Loaded here only: a process on a file: database runs the engine in its worker and never needs it on the main thread. */
async function openMemory(): Promise<DbHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  return openPglite(new PGlite({ startParams: [...PGlite.defaultStartParams, ...SETTING_PARAMS] }), () => {});
}

/** Opens a handle on an existing PGlite instance; `testing.ts` uses it for cloned templates. */
export async function openPglite(pglite: PGlite, onClose: () => void): Promise<DbHandle> {
  await pglite.waitReady;
  return handle(new Kysely<Database>({ dialect: new PGliteDialect(pglite) }), 'pglite', onClose);
}

function handle(db: Kysely<Database>, kind: DbHandle['kind'], onClose: () => void | Promise<void>): DbHandle {
  let closing: Promise<void> | undefined;
  return {
    db,
    kind,
    async ping() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((done) => {
        timer = setTimeout(() => done(false), PING_TIMEOUT_MS);
      });
      const query = sql`select 1`.execute(db).then(
        () => true,
        () => false,
      );
      return Promise.race([query, timeout]).finally(() => clearTimeout(timer));
    },
    close() {
      closing ??= db.destroy().finally(onClose);
      return closing;
    },
  };
}

function filePath(url: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url.slice('file:'.length);
  if (path === '') throw new Error('A file: DATABASE_URL needs a path, e.g. file:./.gateway-data/pgdata');
  return resolve(path);
}
