import type { Database } from '@agentgw/db';
import { sql, type Kysely } from 'kysely';

/** Links pruned per transaction, so retention never holds a chain's head for long. */
const PRUNE_STEP = 5000;

/** What one retention run removed. */
export interface PruneOutcome {
  rows: number;
  links: number;
  placeholders: number;
}

/**
 * Deletes what was written before `cutoff`. Per tenant chain, the oldest links written before
 * the cutoff are removed as a prefix (never a hole in the middle), together with the rows whose
 * every link is in that prefix; the last removed link's hash becomes the chain's anchor, so
 * verify still checks the first remaining link against it. A row updated after the cutoff is
 * kept with its whole history from that update on. Placeholders whose create never came are
 * deleted once they are that old too.
 */
export async function pruneAudit(db: Kysely<Database>, cutoff: Date): Promise<PruneOutcome> {
  const outcome: PruneOutcome = { rows: 0, links: 0, placeholders: 0 };
  const tenants = await db.selectFrom('audit_chain_heads').select('tenant_key').orderBy('tenant_key').execute();
  for (const { tenant_key: tenantKey } of tenants) {
    for (;;) {
      const step = await db.transaction().execute(async (trx) => {
        const head = await trx
          .selectFrom('audit_chain_heads')
          .select(['seq', 'pruned_seq'])
          .where('tenant_key', '=', tenantKey)
          .forUpdate()
          .executeTakeFirstOrThrow();
        const from = Number(head.pruned_seq);
        const firstKept = await trx
          .selectFrom('audit_chain')
          .select('seq')
          .where('tenant_key', '=', tenantKey)
          .where('seq', '>', from)
          .where('created_at', '>=', cutoff)
          .orderBy('seq')
          .limit(1)
          .executeTakeFirst();
        const upTo = Math.min((firstKept ? Number(firstKept.seq) : Number(head.seq) + 1) - 1, from + PRUNE_STEP);
        if (upTo <= from) return undefined;
        const rows = await sql`
          delete from audit_logs where id in (
            select audit_id from audit_chain where tenant_key = ${tenantKey} and seq > ${from} and seq <= ${upTo}
          ) and not exists (
            select 1 from audit_chain l where l.audit_id = audit_logs.id and l.tenant_key = ${tenantKey} and l.seq > ${upTo}
          )`.execute(trx);
        const anchor = await trx
          .selectFrom('audit_chain')
          .select('hash')
          .where('tenant_key', '=', tenantKey)
          .where('seq', '=', upTo)
          .executeTakeFirstOrThrow();
        const links = await trx
          .deleteFrom('audit_chain')
          .where('tenant_key', '=', tenantKey)
          .where('seq', '<=', upTo)
          .executeTakeFirst();
        await trx
          .updateTable('audit_chain_heads')
          .set({ pruned_seq: upTo, pruned_hash: anchor.hash })
          .where('tenant_key', '=', tenantKey)
          .execute();
        return { rows: Number(rows.numAffectedRows ?? 0), links: Number(links.numDeletedRows) };
      });
      if (!step) break;
      outcome.rows += step.rows;
      outcome.links += step.links;
    }
  }
  const placeholders = await db
    .deleteFrom('audit_logs')
    .where('tool_name', 'is', null)
    .where('updated_at', '<', cutoff)
    .executeTakeFirst();
  outcome.placeholders = Number(placeholders.numDeletedRows);
  return outcome;
}

/**
 * What autovacuum does after retention's deletes: makes their space reusable (and trims the
 * tables' empty ends) and refreshes the planner's statistics. The embedded engine (single-user
 * PGlite) has no autovacuum, so without this its audit tables grew by every row written,
 * whatever retention deleted.
 */
export async function reclaimSpace(db: Kysely<Database>): Promise<void> {
  await sql`vacuum (analyze) audit_logs, audit_chain`.execute(db);
}
