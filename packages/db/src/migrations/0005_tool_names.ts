import { sql, type Kysely } from 'kysely';

/**
 * Stable tool names (issue 24.1): a provider may carry a name prefix, and every tool the unified
 * endpoint exposes keeps the name it was first given, per scope (the tenant a call acts in, ''
 * for none): (scope, provider, upstream name) → exposed name, one owner per exposed name in a
 * scope. A provider's rows go with it; nothing else ever changes a row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tool_providers').addColumn('name_prefix', 'text').execute();
  await db.schema
    .createTable('tool_names')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('provider_id', 'text', (c) => c.notNull().references('tool_providers.id').onDelete('cascade'))
    .addColumn('upstream_name', 'text', (c) => c.notNull())
    .addColumn('exposed_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('tool_names_pkey', ['scope', 'provider_id', 'upstream_name'])
    .addUniqueConstraint('tool_names_exposed_key', ['scope', 'exposed_name'])
    .execute();
  await db.schema.createIndex('tool_names_provider_id_idx').on('tool_names').column('provider_id').execute();
}
