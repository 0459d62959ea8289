import type { Kysely } from 'kysely';

/**
 * Exact-call approvals: a confirmation remembers a hash of the call it approves (agent, end
 * user, provider, tool, arguments), so its single-use token lets through that call and no other.
 * Pending confirmations are looked up by expiry (timeouts, replay of missed events) and by tenant
 * (tenant admins' lists).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('confirmations').addColumn('call_hash', 'text').execute();
  await db.schema
    .createIndex('confirmations_tenant_id_idx')
    .on('confirmations')
    .columns(['tenant_id', 'created_at'])
    .execute();
}
