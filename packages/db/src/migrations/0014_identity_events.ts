import { sql, type Kysely } from 'kysely';

/**
 * Identity events (issue 30): what an operator reconstructs about sign-ins and connections —
 * OAuth client registrations, consents, grant revocations (and by whom), connected accounts
 * linked, refreshed and disconnected, token exchanges refused. Admin/identity actions, kept apart
 * from the tool-call audit log. No foreign keys: an event outlives the user or client it names.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('identity_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('tenant_id', 'text')
    .addColumn('client_id', 'text')
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('identity_events_user_idx')
    .on('identity_events')
    .columns(['user_id', 'created_at desc'])
    .execute();
  await db.schema
    .createIndex('identity_events_type_idx')
    .on('identity_events')
    .columns(['type', 'created_at desc'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('identity_events').execute();
}
