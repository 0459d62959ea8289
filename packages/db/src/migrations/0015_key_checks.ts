import { sql, type Kysely } from 'kysely';

/**
 * `key_checks` (issue 33.12): for each sealing key, an HMAC of a fixed label under the key the
 * data was written with, so a start with other keys is refused before it writes anything under
 * them. The HMAC says nothing usable about the key; only its holder can reproduce it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('key_checks')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}
