import { sql, type Kysely } from 'kysely';

/**
 * Every table of schema.ts. Migrations get an untyped `Kysely` on purpose: they must keep working
 * when schema.ts later describes a newer shape of the tables.
 *
 * Foreign keys only where a row cannot outlive its parent: a user's credentials and devices
 * die with the user. Ownership and attribution columns (owner_id, creator, audit and
 * confirmation ids) carry no FK, so deleting a user or agent never rewrites history, and
 * access rules name providers by id or '*'.
 */

type AnyDb = Kysely<unknown>;

const oneOf = (column: string, values: readonly string[]) =>
  sql`${sql.ref(column)} in (${sql.join(values.map((v) => sql.lit(v)))})`;

const allIn = (column: string, values: readonly string[]) =>
  sql`${sql.ref(column)} <@ array[${sql.join(values.map((v) => sql.lit(v)))}]::text[]`;

const ROLES = ['admin', 'tenant_admin', 'agent_creator'] as const;
const API_KEY_SCOPES = ['credentials:resolve', 'credentials:read', 'credentials:write'] as const;
const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('tenant_id', 'text')
    .addColumn('roles', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{agent_creator}'::text[]`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('users_roles_check', allIn('roles', ROLES))
    .execute();
  // Emails are stored lower-cased; the index on lower() also catches a writer that forgot.
  await db.schema
    .createIndex('users_email_key')
    .on('users')
    .unique()
    .expression(sql`lower(email)`)
    .execute();
  await db.schema.createIndex('users_tenant_id_idx').on('users').column('tenant_id').execute();

  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('upstream_url', 'text', (c) => c.notNull())
    .addColumn('upstream_secret_enc', 'text')
    .addColumn('require_confirmation', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('required_credentials', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('tenant_id', 'text')
    .addColumn('owner_id', 'text')
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('runtime_token_hash', 'text', (c) => c.notNull())
    .addColumn('runtime_token_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('agents_runtime_token_hash_key', ['runtime_token_hash'])
    .execute();
  await db.schema.createIndex('agents_tenant_id_idx').on('agents').column('tenant_id').execute();
  await db.schema.createIndex('agents_owner_id_idx').on('agents').column('owner_id').execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{credentials:resolve}'::text[]`))
    .addColumn('user_id', 'text')
    .addColumn('tenant_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addUniqueConstraint('api_keys_key_hash_key', ['key_hash'])
    .addCheckConstraint('api_keys_scopes_check', allIn('scopes', API_KEY_SCOPES))
    .execute();
  await db.schema.createIndex('api_keys_tenant_id_idx').on('api_keys').column('tenant_id').execute();

  await db.schema
    .createTable('tool_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('pattern', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('auth_type', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('auth_secret_enc', 'text')
    .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('description', 'text')
    .addColumn('tenant_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('tool_providers_auth_type_check', oneOf('auth_type', ['bearer', 'api_key', 'none']))
    .execute();
  await db.schema.createIndex('tool_providers_tenant_id_idx').on('tool_providers').column('tenant_id').execute();

  await db.schema
    .createTable('access_rules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('subject_type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('provider_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('tool_pattern', 'text', (c) => c.notNull().defaultTo('*'))
    .addColumn('risk_level', 'text')
    .addColumn('confirmation_mode', 'text')
    .addColumn('description', 'text')
    .addColumn('tenant_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('access_rules_subject_type_check', oneOf('subject_type', ['user', 'agent']))
    .addCheckConstraint('access_rules_action_check', oneOf('action', ['allow', 'deny', 'require_confirmation']))
    .addCheckConstraint('access_rules_risk_level_check', oneOf('risk_level', RISK_LEVELS))
    .addCheckConstraint('access_rules_confirmation_mode_check', oneOf('confirmation_mode', ['always', 'never']))
    .execute();
  await db.schema
    .createIndex('access_rules_subject_idx')
    .on('access_rules')
    .columns(['subject_type', 'subject_id'])
    .execute();
  await db.schema.createIndex('access_rules_provider_id_idx').on('access_rules').column('provider_id').execute();

  await db.schema
    .createTable('credential_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('service_type', 'text', (c) => c.notNull())
    .addColumn('auth_type', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('config', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('tenant_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'credential_providers_auth_type_check',
      oneOf('auth_type', ['oauth2', 'api_key', 'jwt', 'basic']),
    )
    .execute();
  // One provider per service type per tenant, and one global one (tenant_id null).
  await db.schema
    .createIndex('credential_providers_tenant_service_key')
    .on('credential_providers')
    .unique()
    .expression(sql`coalesce(tenant_id, ''), service_type`)
    .execute();

  await db.schema
    .createTable('user_credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text')
    .addColumn('service_type', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('ciphertext', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('user_credentials_user_service_key', ['user_id', 'service_type'])
    .addCheckConstraint('user_credentials_kind_check', oneOf('kind', ['jwt', 'api_key', 'oauth2', 'basic']))
    .execute();

  await db.schema
    .createTable('confirmations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('end_user_id', 'text')
    .addColumn('agent_id', 'text')
    .addColumn('provider_id', 'text')
    .addColumn('tenant_id', 'text')
    .addColumn('tool_name', 'text', (c) => c.notNull())
    .addColumn('arguments', 'jsonb', (c) => c.notNull())
    .addColumn('risk_level', 'text', (c) => c.notNull())
    .addColumn('audit_id', 'text')
    .addColumn('reason', 'text')
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'confirmations_status_check',
      oneOf('status', ['pending', 'confirmed', 'rejected', 'expired', 'consumed']),
    )
    .addCheckConstraint('confirmations_risk_level_check', oneOf('risk_level', RISK_LEVELS))
    .execute();
  await db.schema
    .createIndex('confirmations_status_idx')
    .on('confirmations')
    .columns(['status', 'created_at'])
    .execute();
  await db.schema.createIndex('confirmations_user_id_idx').on('confirmations').column('user_id').execute();
  await db.schema.createIndex('confirmations_end_user_id_idx').on('confirmations').column('end_user_id').execute();

  await db.schema
    .createTable('audit_logs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text')
    .addColumn('agent_id', 'text')
    .addColumn('end_user_id', 'text')
    .addColumn('provider_id', 'text')
    .addColumn('tenant_id', 'text')
    .addColumn('tool_name', 'text', (c) => c.notNull())
    .addColumn('arguments', 'jsonb')
    .addColumn('result', 'jsonb')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('duration', 'integer')
    .addColumn('confirmed_by', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'audit_logs_status_check',
      oneOf('status', ['pending', 'confirmed', 'rejected', 'completed', 'failed']),
    )
    .execute();
  // Log queries filter by one of these and page newest first.
  for (const column of ['user_id', 'agent_id', 'tenant_id', 'tool_name', 'status']) {
    await db.schema
      .createIndex(`audit_logs_${column}_idx`)
      .on('audit_logs')
      .columns([column, 'created_at desc'])
      .execute();
  }
  await db.schema.createIndex('audit_logs_created_at_idx').on('audit_logs').column('created_at desc').execute();

  await db.schema
    .createTable('devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text')
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('push_token', 'text', (c) => c.notNull())
    .addColumn('device_name', 'text')
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('devices_user_push_token_key', ['user_id', 'push_token'])
    .addCheckConstraint('devices_platform_check', oneOf('platform', ['ios', 'macos', 'android']))
    .execute();
}
