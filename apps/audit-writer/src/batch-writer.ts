import { json, type AuditChainTable, type Database } from '@agentgw/db';
import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { RowPatch, ValidJob } from './audit-job.js';
import { mergeJobs } from './audit-job.js';
import { contentHash, GENESIS_HASH, linkHash, tenantKeyOf, type HashedRow } from './chain.js';

/** Rows per INSERT statement: 19 parameters a row stays far below PostgreSQL's 65,535. */
const ROWS_PER_STATEMENT = 1000;

/** What a written batch amounted to. */
export interface BatchOutcome {
  /** Jobs skipped because a delivery of them was already written. */
  duplicates: number;
  /** Rows inserted or updated. */
  rows: number;
  /** Rows still waiting for their create (placeholders). */
  placeholders: number;
  links: number;
}

const chunks = <T>(items: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/**
 * Writes a batch of audit jobs in one transaction: drops jobs already written (by key), merges
 * the rest per audit id, upserts the rows with the order-independent merge rule, then appends
 * one chain link per job to its row's tenant chain. A duplicate key raced in by another writer
 * makes the transaction fail; the retried batch then skips it.
 */
export async function writeBatch(db: Kysely<Database>, jobs: readonly ValidJob[]): Promise<BatchOutcome> {
  if (jobs.length === 0) return { duplicates: 0, rows: 0, placeholders: 0, links: 0 };
  return db.transaction().execute(async (trx) => {
    const seen = new Set<string>();
    for (const keys of chunks([...new Set(jobs.map((j) => j.key))], 5000)) {
      const rows = await trx.selectFrom('audit_chain').select('job_key').where('job_key', 'in', keys).execute();
      for (const r of rows) seen.add(r.job_key);
    }
    // Skips jobs written before, and a second delivery within this batch.
    const fresh = jobs.filter((j) => {
      if (seen.has(j.key)) return false;
      seen.add(j.key);
      return true;
    });
    const patches = mergeJobs(fresh);
    const written: (HashedRow & { keys: string[] })[] = [];
    for (const part of chunks(patches, ROWS_PER_STATEMENT)) {
      const rows = await upsertRows(trx, part);
      const keysById = new Map(part.map((p) => [p.id, p.keys]));
      for (const row of rows) written.push({ ...row, keys: keysById.get(row.id) ?? [] });
    }
    const chained = written.filter((r) => r.tool_name !== null);
    const links = await appendLinks(trx, chained);
    return { duplicates: jobs.length - fresh.length, rows: written.length, placeholders: written.length - chained.length, links };
  });
}

/** `excluded.<field>` wins when its version is newer (byte order, as in JS) than the stored one. */
const newerWins = (field: string) => {
  const v = sql.raw(`${field}_v`);
  const f = sql.raw(field);
  const cond = sql`excluded.${v} is not null and (audit_logs.${v} is null or excluded.${v} collate "C" > audit_logs.${v} collate "C")`;
  return sql`${f} = case when ${cond} then excluded.${f} else audit_logs.${f} end, ${v} = case when ${cond} then excluded.${v} else audit_logs.${v} end`;
};

/** A create's fields complete a placeholder and are never changed afterwards. */
const fromCreate = (field: string) => {
  const f = sql.raw(field);
  return sql`${f} = case when audit_logs.tool_name is null and excluded.tool_name is not null then excluded.${f} else audit_logs.${f} end`;
};

async function upsertRows(trx: Transaction<Database>, patches: readonly RowPatch[]): Promise<HashedRow[]> {
  const values = patches.map((p) => {
    const c = p.create;
    return sql`(${p.id}, ${c?.userId ?? null}, ${c?.agentId ?? null}, ${c?.endUserId ?? null}, ${c?.providerId ?? null},
      ${c?.tenantId ?? null}, ${c?.toolName ?? null}, ${c ? json(c.arguments) : null}::jsonb, ${c?.createdAt ?? p.firstAt}::timestamptz,
      ${p.status?.value ?? 'pending'}, ${p.status?.version ?? null},
      ${p.result ? json(p.result.value) : null}::jsonb, ${p.result?.version ?? null},
      ${p.duration?.value ?? null}::integer, ${p.duration?.version ?? null},
      ${p.confirmedBy?.value ?? null}, ${p.confirmedBy?.version ?? null},
      ${p.error?.value ?? null}, ${p.error?.version ?? null}, now())`;
  });
  const result = await sql<HashedRow>`
    insert into audit_logs (id, user_id, agent_id, end_user_id, provider_id, tenant_id, tool_name, arguments, created_at,
      status, status_v, result, result_v, duration, duration_v, confirmed_by, confirmed_by_v, error, error_v, updated_at)
    values ${sql.join(values)}
    on conflict (id) do update set
      ${sql.join(['user_id', 'agent_id', 'end_user_id', 'provider_id', 'tenant_id', 'arguments', 'created_at'].map(fromCreate))},
      tool_name = coalesce(audit_logs.tool_name, excluded.tool_name),
      ${sql.join(['status', 'result', 'duration', 'confirmed_by', 'error'].map(newerWins))},
      updated_at = excluded.updated_at
    returning id, tenant_id, user_id, agent_id, end_user_id, provider_id, tool_name, arguments, result, status, duration,
      confirmed_by, error, created_at, updated_at`.execute(trx);
  return result.rows;
}

/**
 * Appends one link per job to each row's tenant chain. The chains' heads are locked (in tenant
 * order, so two writers cannot deadlock) for the rest of the transaction: links of one chain
 * are appended by one writer at a time, in commit order.
 */
async function appendLinks(trx: Transaction<Database>, rows: readonly (HashedRow & { keys: string[] })[]): Promise<number> {
  if (rows.length === 0) return 0;
  const tenants = [...new Set(rows.map((r) => tenantKeyOf(r.tenant_id)))].sort();
  await trx
    .insertInto('audit_chain_heads')
    .values(tenants.map((t) => ({ tenant_key: t, seq: 0, hash: GENESIS_HASH, pruned_hash: GENESIS_HASH })))
    .onConflict((oc) => oc.column('tenant_key').doNothing())
    .execute();
  const heads = await trx
    .selectFrom('audit_chain_heads')
    .select(['tenant_key', 'seq', 'hash'])
    .where('tenant_key', 'in', tenants)
    .orderBy('tenant_key')
    .forUpdate()
    .execute();
  const head = new Map(heads.map((h) => [h.tenant_key, { seq: Number(h.seq), hash: h.hash }]));
  const links: Insertable<AuditChainTable>[] = [];
  for (const row of rows) {
    const tenantKey = tenantKeyOf(row.tenant_id);
    const at = head.get(tenantKey)!;
    const hash = contentHash(row);
    for (const jobKey of row.keys) {
      const link = { tenantKey, seq: at.seq + 1, auditId: row.id, jobKey, contentHash: hash, prevHash: at.hash };
      const own = linkHash(link);
      links.push({
        tenant_key: tenantKey, seq: link.seq, audit_id: row.id, job_key: jobKey, content_hash: hash,
        prev_hash: link.prevHash, hash: own,
      });
      at.seq = link.seq;
      at.hash = own;
    }
  }
  for (const part of chunks(links, ROWS_PER_STATEMENT * 2)) {
    await trx.insertInto('audit_chain').values(part).execute();
  }
  const updates = tenants.map((t) => sql`(${t}::text, ${head.get(t)!.seq}::bigint, ${head.get(t)!.hash}::text)`);
  await sql`update audit_chain_heads as h set seq = v.seq, hash = v.hash
    from (values ${sql.join(updates)}) as v(tenant_key, seq, hash) where h.tenant_key = v.tenant_key`.execute(trx);
  return links.length;
}
