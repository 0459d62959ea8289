import { sql, type Kysely } from 'kysely';

/**
 * The audit log as apps/audit-writer keeps it (see its README):
 *
 * - Order-independent merging: an update may reach the writer before its create. It then
 *   creates a placeholder row (tool_name null, hidden from queries) that the create completes.
 *   Each mutable field carries the version (`<field>_v`, a sortable text) of the job that set
 *   it; a job's value wins only over an older version, whatever order jobs arrive in.
 * - Tamper evidence: `audit_chain` is a hash chain per tenant (tenant_key '' for rows without a
 *   tenant), one link per job written, each link hashing the row's content after that job and the
 *   previous link. `audit_chain_heads` holds each chain's last link (locked by writers to append
 *   in order) and the anchor left by retention. `job_key` is unique so a redelivered job is
 *   recognised and written once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('audit_logs')
    .alterColumn('tool_name', (c) => c.dropNotNull())
    .execute();
  for (const field of ['status', 'result', 'duration', 'confirmed_by', 'error']) {
    await db.schema.alterTable('audit_logs').addColumn(`${field}_v`, 'text').execute();
  }
  // The query indexes of 0001 ((user|agent|tenant|tool|status), created_at desc) already serve
  // every filter: each further index costs every write, and writes are the hot path.
  // Placeholders are few and short-lived; retention finds the stale ones here.
  await db.schema
    .createIndex('audit_logs_placeholder_idx')
    .on('audit_logs')
    .column('updated_at')
    .where(sql.ref('tool_name'), 'is', null)
    .execute();

  await db.schema
    .createTable('audit_chain')
    .addColumn('tenant_key', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('audit_id', 'text', (c) => c.notNull())
    .addColumn('job_key', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('audit_chain_pkey', ['tenant_key', 'seq'])
    .addUniqueConstraint('audit_chain_job_key_key', ['job_key'])
    .execute();
  await db.schema.createIndex('audit_chain_audit_id_idx').on('audit_chain').columns(['audit_id', 'seq']).execute();

  await db.schema
    .createTable('audit_chain_heads')
    .addColumn('tenant_key', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    // Links up to pruned_seq were removed by retention; pruned_hash is the last one's hash.
    .addColumn('pruned_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('pruned_hash', 'text', (c) => c.notNull())
    .execute();
}
