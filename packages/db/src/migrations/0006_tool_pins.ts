import { sql, type Kysely } from 'kysely';

const oneOf = (column: string, values: readonly string[]) =>
  sql`${sql.ref(column)} in (${sql.join(values.map((v) => sql.lit(v)))})`;

/**
 * Pinned tool definitions (issue 24.3): each provider says how a pin is first made
 * (`tool_pinning`: off, first_sight, approval), and each tool it offered has at most one row: the
 * pinned definition (its hash, the hash without the name for renames, and the definition for the
 * diff) and a quarantined one waiting for an admin (pending), with who approved the pin and when.
 * The values are spelled out (not imported) so this migration never changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('tool_providers')
    .addColumn('tool_pinning', 'text', (c) =>
      c
        .notNull()
        .defaultTo('off')
        .check(oneOf('tool_pinning', ['off', 'first_sight', 'approval'])),
    )
    .execute();
  await db.schema
    .createTable('tool_pins')
    .addColumn('provider_id', 'text', (c) => c.notNull().references('tool_providers.id').onDelete('cascade'))
    .addColumn('tool_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('pinned_hash', 'text')
    .addColumn('pinned_body_hash', 'text')
    .addColumn('pinned_definition', 'jsonb')
    .addColumn('pending_hash', 'text')
    .addColumn('pending_definition', 'jsonb')
    .addColumn('pending_since', 'timestamptz')
    .addColumn('renamed_from', 'text')
    .addColumn('approved_by', 'text')
    .addColumn('approved_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('tool_pins_pkey', ['provider_id', 'tool_name'])
    .addCheckConstraint('tool_pins_status_check', oneOf('status', ['pinned', 'new', 'changed', 'blocked']))
    .execute();
  await db.schema.createIndex('tool_pins_status_idx').on('tool_pins').columns(['status', 'provider_id']).execute();
}
