import { sql, type InsertType } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DbHandle } from './connection.js';
import { migrateToLatest } from './migrate.js';
import { MIGRATION_NAMES } from './migrations/index.js';
import type { Database } from './schema.js';
import { openTestDatabase, testBackends } from './testing.js';

// By the insert type: a jsonb column may hold JSON null, so its select type says nothing here.
type Nullability<T> = { [K in keyof T]-?: null extends InsertType<T[K]> ? 'null' : 'not null' };

/**
 * Every column of schema.ts with its nullability. The type makes tsc reject this object when it
 * drifts from schema.ts; the test below rejects it when it drifts from the migrations.
 */
const expectedColumns: { [T in keyof Database]: Nullability<Database[T]> } = {
  users: {
    id: 'not null',
    email: 'not null',
    password_hash: 'not null',
    name: 'null',
    tenant_id: 'null',
    roles: 'not null',
    created_at: 'not null',
    updated_at: 'not null',
    password_changed_at: 'null',
  },
  external_identities: {
    issuer: 'not null',
    subject: 'not null',
    user_id: 'not null',
    created_at: 'not null',
  },
  agents: {
    id: 'not null',
    name: 'not null',
    description: 'null',
    upstream_url: 'not null',
    upstream_secret_enc: 'null',
    require_confirmation: 'not null',
    tool_surface: 'not null',
    required_credentials: 'not null',
    tenant_id: 'null',
    owner_id: 'null',
    is_active: 'not null',
    runtime_token_hash: 'not null',
    runtime_token_prefix: 'not null',
    created_at: 'not null',
    updated_at: 'not null',
  },
  api_keys: {
    id: 'not null',
    name: 'not null',
    key_hash: 'not null',
    key_prefix: 'not null',
    scopes: 'not null',
    user_id: 'null',
    tenant_id: 'null',
    created_at: 'not null',
    last_used_at: 'null',
    revoked_at: 'null',
  },
  tool_providers: {
    id: 'not null',
    name: 'not null',
    pattern: 'not null',
    endpoint: 'not null',
    auth_type: 'not null',
    auth_secret_enc: 'null',
    credential_service_type: 'null',
    priority: 'not null',
    description: 'null',
    tenant_id: 'null',
    created_at: 'not null',
    updated_at: 'not null',
    name_prefix: 'null',
    tool_pinning: 'not null',
    token_exchange: 'null',
  },
  tool_names: {
    scope: 'not null',
    provider_id: 'not null',
    upstream_name: 'not null',
    exposed_name: 'not null',
    created_at: 'not null',
  },
  tool_pins: {
    provider_id: 'not null',
    tool_name: 'not null',
    status: 'not null',
    pinned_hash: 'null',
    pinned_body_hash: 'null',
    pinned_definition: 'null',
    pending_hash: 'null',
    pending_definition: 'null',
    pending_since: 'null',
    renamed_from: 'null',
    approved_by: 'null',
    approved_at: 'null',
    created_at: 'not null',
    updated_at: 'not null',
  },
  access_rules: {
    id: 'not null',
    subject_type: 'not null',
    subject_id: 'not null',
    provider_id: 'not null',
    action: 'not null',
    tool_pattern: 'not null',
    risk_level: 'null',
    confirmation_mode: 'null',
    description: 'null',
    tenant_id: 'null',
    created_at: 'not null',
    updated_at: 'not null',
    confirm_carriers: 'null',
  },
  credential_providers: {
    id: 'not null',
    name: 'not null',
    service_type: 'not null',
    auth_type: 'not null',
    description: 'null',
    config: 'not null',
    tenant_id: 'null',
    created_at: 'not null',
    updated_at: 'not null',
  },
  user_credentials: {
    id: 'not null',
    user_id: 'not null',
    tenant_id: 'null',
    service_type: 'not null',
    kind: 'not null',
    ciphertext: 'not null',
    nonce: 'not null',
    key_id: 'not null',
    metadata: 'not null',
    expires_at: 'null',
    created_at: 'not null',
    updated_at: 'not null',
  },
  confirmations: {
    id: 'not null',
    status: 'not null',
    user_id: 'null',
    end_user_id: 'null',
    agent_id: 'null',
    provider_id: 'null',
    tenant_id: 'null',
    tool_name: 'not null',
    arguments: 'not null',
    risk_level: 'not null',
    audit_id: 'null',
    reason: 'null',
    decided_by: 'null',
    decided_at: 'null',
    expires_at: 'not null',
    created_at: 'not null',
    call_hash: 'null',
    decided_via: 'null',
    decided_client_id: 'null',
  },
  audit_logs: {
    id: 'not null',
    user_id: 'null',
    agent_id: 'null',
    end_user_id: 'null',
    provider_id: 'null',
    tenant_id: 'null',
    tool_name: 'null',
    arguments: 'null',
    result: 'null',
    status: 'not null',
    duration: 'null',
    confirmed_by: 'null',
    error: 'null',
    oauth_client_id: 'null',
    created_at: 'not null',
    updated_at: 'not null',
    status_v: 'null',
    result_v: 'null',
    duration_v: 'null',
    confirmed_by_v: 'null',
    error_v: 'null',
    decided_via: 'null',
    decided_client_id: 'null',
    decided_via_v: 'null',
  },
  audit_chain: {
    tenant_key: 'not null',
    seq: 'not null',
    audit_id: 'not null',
    job_key: 'not null',
    content_hash: 'not null',
    prev_hash: 'not null',
    hash: 'not null',
    created_at: 'not null',
  },
  audit_chain_heads: {
    tenant_key: 'not null',
    seq: 'not null',
    hash: 'not null',
    pruned_seq: 'not null',
    pruned_hash: 'not null',
  },
  devices: {
    id: 'not null',
    user_id: 'not null',
    tenant_id: 'null',
    platform: 'not null',
    push_token: 'not null',
    device_name: 'null',
    is_active: 'not null',
    created_at: 'not null',
    updated_at: 'not null',
  },
  key_checks: { name: 'not null', digest: 'not null', updated_at: 'not null' },
  oauth_flows: {
    state_hash: 'not null',
    user_id: 'not null',
    tenant_id: 'null',
    provider_id: 'not null',
    service_type: 'not null',
    code_verifier: 'not null',
    redirect_uri: 'not null',
    expires_at: 'not null',
    created_at: 'not null',
  },
  oauth_signing_keys: {
    kid: 'not null',
    public_jwk: 'not null',
    private_jwk_sealed: 'not null',
    created_at: 'not null',
  },
  oauth_models: {
    model: 'not null',
    id: 'not null',
    payload: 'not null',
    grant_id: 'null',
    uid: 'null',
    account_id: 'null',
    expires_at: 'null',
  },
  oauth_consents: {
    user_id: 'not null',
    client_id: 'not null',
    resource: 'not null',
    scopes: 'not null',
    created_at: 'not null',
  },
  oauth_client_agents: {
    user_id: 'not null',
    client_id: 'not null',
    agent_id: 'not null',
    created_by: 'null',
    created_at: 'not null',
  },
  identity_events: {
    id: 'not null',
    type: 'not null',
    actor_id: 'null',
    user_id: 'null',
    tenant_id: 'null',
    client_id: 'null',
    details: 'not null',
    created_at: 'not null',
  },
};

const allMigrations = MIGRATION_NAMES;

describe.each(testBackends())('migrations on %s', (backend) => {
  let handle: DbHandle;
  beforeEach(async () => {
    handle = await openTestDatabase(backend);
    // Test databases arrive migrated; start these tests from an empty one.
    await sql`drop schema public cascade`.execute(handle.db);
    await sql`create schema public`.execute(handle.db);
  });
  afterEach(() => handle.close());

  it('apply on a fresh database and then have nothing left to do', async () => {
    expect(await migrateToLatest(handle.db)).toEqual(allMigrations);
    expect(await migrateToLatest(handle.db)).toEqual([]);
  });

  it('create exactly the tables and columns of schema.ts', async () => {
    await migrateToLatest(handle.db);
    const tables = await handle.db.introspection.getTables();
    const actual = Object.fromEntries(
      tables.map((t) => [
        t.name,
        Object.fromEntries(t.columns.map((c) => [c.name, c.isNullable ? 'null' : 'not null'])),
      ]),
    );
    expect(actual).toEqual(expectedColumns);
  });

  it('are applied once when several migrators start together', async () => {
    const runs = await Promise.all(Array.from({ length: 4 }, () => migrateToLatest(handle.db)));
    expect(runs.flat()).toEqual(allMigrations);
    const { rows } = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(handle.db);
    expect(Number(rows[0]?.n)).toBe(allMigrations.length);
  });

  it('fail with a message naming the migration', async () => {
    await sql`create table users (id text primary key)`.execute(handle.db);
    await expect(migrateToLatest(handle.db)).rejects.toThrow(
      /^Migration 0001_initial failed: .*"users" already exists/,
    );
    // The failed run left nothing half-done behind.
    const tables = await handle.db.introspection.getTables();
    expect(tables.map((t) => t.name)).toEqual(['users']);
  });
});
