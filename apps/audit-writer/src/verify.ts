import type { Database } from '@agentgw/db';
import { sql, type Kysely } from 'kysely';
import { CONTENT_SQL, contentHash, linkHash } from './chain.js';

/** Links checked per query. */
const PAGE = 2000;

/** The first thing found wrong, naming the row. */
export interface ChainBreak {
  tenantKey: string;
  /** The link where it was found, when it was found on a link. */
  seq?: number;
  auditId: string;
  reason: string;
}

/** Verification of one tenant chain. */
export interface ChainReport {
  tenantKey: string;
  links: number;
  broken?: ChainBreak;
}

/**
 * Walks one tenant's chain from its anchor: every link must follow the previous one (seq and
 * prev_hash), hash to its stored hash, and the last link of each row must match the row's
 * current content. Then every written row of the tenant must be in some chain. Stops at the
 * first break.
 */
export async function verifyChain(db: Kysely<Database>, tenantKey: string): Promise<ChainReport> {
  const head = await db
    .selectFrom('audit_chain_heads')
    .selectAll()
    .where('tenant_key', '=', tenantKey)
    .executeTakeFirst();
  const report: ChainReport = { tenantKey, links: 0 };
  if (head) {
    let expectSeq = Number(head.pruned_seq) + 1;
    let prevHash = head.pruned_hash;
    let lastAuditId = '';
    for (;;) {
      const links = await db
        .selectFrom('audit_chain')
        .selectAll()
        .where('tenant_key', '=', tenantKey)
        .where('seq', '>=', expectSeq)
        .orderBy('seq')
        .limit(PAGE)
        .execute();
      if (links.length === 0) break;
      const ids = [...new Set(links.map((l) => l.audit_id))];
      const lastSeqs = await db
        .selectFrom('audit_chain')
        .select(['audit_id', (eb) => eb.fn.max('seq').as('seq')])
        .where('audit_id', 'in', ids)
        .groupBy('audit_id')
        .execute();
      const lastSeq = new Map(lastSeqs.map((r) => [r.audit_id, Number(r.seq)]));
      const rows = await db
        .selectFrom('audit_logs')
        .select(['id', CONTENT_SQL.as('content')])
        .where('id', 'in', ids)
        .execute();
      const rowHash = new Map(rows.map((r) => [r.id, contentHash(r.content)]));
      for (const link of links) {
        const seq = Number(link.seq);
        const at = { tenantKey, seq, auditId: link.audit_id };
        if (seq !== expectSeq)
          return { ...report, broken: { ...at, reason: `link ${expectSeq} is missing (the chain jumps to ${seq})` } };
        if (link.prev_hash !== prevHash)
          return { ...report, broken: { ...at, reason: 'link does not follow the previous one (prev_hash differs)' } };
        const own = linkHash({
          tenantKey,
          seq,
          auditId: link.audit_id,
          jobKey: link.job_key,
          contentHash: link.content_hash,
          prevHash: link.prev_hash,
        });
        if (own !== link.hash)
          return { ...report, broken: { ...at, reason: 'link was altered (its hash does not match its content)' } };
        if (lastSeq.get(link.audit_id) === seq) {
          const hash = rowHash.get(link.audit_id);
          if (hash === undefined)
            return { ...report, broken: { ...at, reason: 'row is missing (deleted other than by retention)' } };
          if (hash !== link.content_hash) {
            return {
              ...report,
              broken: {
                ...at,
                reason: 'row was changed after it was written (content hash differs from its last link)',
              },
            };
          }
        }
        report.links += 1;
        expectSeq = seq + 1;
        prevHash = link.hash;
        lastAuditId = link.audit_id;
      }
    }
    if (Number(head.seq) !== expectSeq - 1 || head.hash !== prevHash) {
      return {
        ...report,
        broken: {
          tenantKey,
          seq: expectSeq - 1,
          auditId: lastAuditId,
          reason: `chain ends at link ${expectSeq - 1} but its head records link ${head.seq} (links removed from the end?)`,
        },
      };
    }
  }
  const unchained = await db
    .selectFrom('audit_logs')
    .select('id')
    .where(sql<string>`coalesce(tenant_id, '')`, '=', tenantKey)
    .where('tool_name', 'is not', null)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('audit_chain').select('seq').whereRef('audit_chain.audit_id', '=', 'audit_logs.id'))),
    )
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
  if (unchained)
    return {
      ...report,
      broken: { tenantKey, auditId: unchained.id, reason: 'row is in no chain (written other than by the writer)' },
    };
  return report;
}

/** Every chain (or one tenant's), plus the tenants of rows that have no chain at all. */
export async function verifyAll(db: Kysely<Database>, tenant?: string): Promise<ChainReport[]> {
  if (tenant !== undefined) return [await verifyChain(db, tenant)];
  const heads = await db.selectFrom('audit_chain_heads').select('tenant_key').execute();
  const rowTenants = await db
    .selectFrom('audit_logs')
    .select(sql<string>`coalesce(tenant_id, '')`.as('tenant_key'))
    .where('tool_name', 'is not', null)
    .distinct()
    .execute();
  const keys = [...new Set([...heads, ...rowTenants].map((r) => r.tenant_key))].sort();
  const reports: ChainReport[] = [];
  for (const key of keys) reports.push(await verifyChain(db, key));
  return reports;
}
