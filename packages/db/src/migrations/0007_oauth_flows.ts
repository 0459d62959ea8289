import { sql, type Kysely } from 'kysely';

/**
 * OAuth connections started in the vault: one row per authorization request in flight, keyed by
 * a hash of its `state` (the value itself only travels in the user's browser). A row is bound to
 * the user who started it, the credential provider and an expiry, and is deleted when its
 * callback arrives (single use), so any replica can finish a flow another one started.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_flows')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text')
    .addColumn('provider_id', 'text', (c) => c.notNull().references('credential_providers.id').onDelete('cascade'))
    .addColumn('service_type', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('oauth_flows_expires_at_idx').on('oauth_flows').column('expires_at').execute();
}
