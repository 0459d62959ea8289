import { createHash } from 'node:crypto';
import { sql } from 'kysely';

/** prev_hash of a chain's first link. */
export const GENESIS_HASH = '0'.repeat(64);

/** Chain of the rows without a tenant. */
export const NO_TENANT_KEY = '';

/** Which chain a row belongs to. */
export const tenantKeyOf = (tenantId: string | null): string => tenantId ?? NO_TENANT_KEY;

/** Times in a content hash: UTC to the microsecond. */
const TIME_FORMAT = sql.lit('YYYY-MM-DD"T"HH24:MI:SS.US');

/**
 * SQL for the text an audit_logs row's content hash is taken over, rendered by PostgreSQL from
 * the row as stored, so the writer (in RETURNING) and verify (reading back) hash exactly the same
 * thing: the json bodies' text as the writer sent it (since 0018; a body written before is
 * jsonb's canonical text, so those rows render as they did under `jsonb_build_array`), and times
 * written out in UTC to the microsecond (independent of the session's time zone; an infinite time
 * becomes null). The writer's version columns are bookkeeping and left out.
 */
export const CONTENT_SQL = sql<string>`json_build_array(
  id, tenant_id, user_id, agent_id, end_user_id, provider_id, tool_name, arguments, result, status, duration,
  confirmed_by, error, to_char(created_at at time zone 'UTC', ${TIME_FORMAT}), to_char(updated_at at time zone 'UTC', ${TIME_FORMAT})
)::text`;

/**
 * A row's content hash: SHA-256 (hex) of its CONTENT_SQL text as UTF-8. Hashed here rather than
 * by `sha256()` in SQL: the same digest (chains written either way verify alike), but the embedded
 * engine's WebAssembly SHA-256 cost ~11 µs per row, most of the text's cost, on the database's thread.
 */
export const contentHash = (content: string): string => createHash('sha256').update(content, 'utf8').digest('hex');

/** What one link commits to. */
export interface LinkFields {
  tenantKey: string;
  seq: number;
  auditId: string;
  jobKey: string;
  contentHash: string;
  prevHash: string;
}

/** A link's own hash: over its place in the chain, its row and job, and the previous link. */
export function linkHash(link: LinkFields): string {
  return createHash('sha256')
    .update(JSON.stringify([link.prevHash, link.tenantKey, link.seq, link.auditId, link.jobKey, link.contentHash]))
    .digest('hex');
}
