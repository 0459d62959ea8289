import { sql, type Kysely } from 'kysely';

/**
 * The gateway as an OAuth authorization server for MCP clients (issue 23): its signing keys
 * (private halves sealed under the platform key), oidc-provider's models (clients, grants,
 * sessions, interactions, codes, refresh tokens: one row per model and id, so any replica
 * serves any step), the consents users gave a client for an endpoint, and the client a call
 * came through on its audit row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('private_jwk_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('oauth_models')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('uid', 'text')
    .addColumn('account_id', 'text')
    .addColumn('expires_at', 'timestamptz')
    .addPrimaryKeyConstraint('oauth_models_pk', ['model', 'id'])
    .execute();
  await db.schema.createIndex('oauth_models_grant_idx').on('oauth_models').column('grant_id').execute();
  await db.schema.createIndex('oauth_models_uid_idx').on('oauth_models').column('uid').execute();
  await db.schema.createIndex('oauth_models_account_idx').on('oauth_models').columns(['model', 'account_id']).execute();
  await db.schema.createIndex('oauth_models_expires_idx').on('oauth_models').column('expires_at').execute();
  await db.schema
    .createTable('oauth_consents')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('oauth_consents_pk', ['user_id', 'client_id', 'resource'])
    .execute();
  await db.schema.alterTable('audit_logs').addColumn('oauth_client_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_logs').dropColumn('oauth_client_id').execute();
  await db.schema.dropTable('oauth_consents').execute();
  await db.schema.dropTable('oauth_models').execute();
  await db.schema.dropTable('oauth_signing_keys').execute();
}
