import { Migrator, type Kysely } from 'kysely';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

/**
 * Applies every pending migration in one transaction and returns the names applied (empty
 * when the database was already current). On PostgreSQL, Kysely's migrator holds an advisory
 * lock for the run, so replicas or migrate commands started together apply each migration once.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results.find((r) => r.status === 'Error')?.migrationName;
    const reason = describeError(error);
    throw new Error(failed ? `Migration ${failed} failed: ${reason}` : `Could not migrate the database: ${reason}`, {
      cause: error,
    });
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** One readable line; pg reports a refused connection as an AggregateError with no message. */
function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') {
    return error.errors.map(describeError).join('; ');
  }
  if (error instanceof Error) return error.message || (error as NodeJS.ErrnoException).code || error.name;
  return String(error);
}
