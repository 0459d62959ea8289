import { createHash } from 'node:crypto';
import type { AuditLogRow } from '@agentgw/db';

/** prev_hash of a chain's first link. */
export const GENESIS_HASH = '0'.repeat(64);

/** Chain of the rows without a tenant. */
export const NO_TENANT_KEY = '';

/** Which chain a row belongs to. */
export const tenantKeyOf = (tenantId: string | null): string => tenantId ?? NO_TENANT_KEY;

/** JSON with object keys sorted at every depth: jsonb reorders keys, the hash must not care. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The columns a row's hash covers: everything it says, not the writer's version bookkeeping. */
export type HashedRow = Pick<
  AuditLogRow,
  | 'id' | 'tenant_id' | 'user_id' | 'agent_id' | 'end_user_id' | 'provider_id' | 'tool_name' | 'arguments'
  | 'result' | 'status' | 'duration' | 'confirmed_by' | 'error' | 'created_at' | 'updated_at'
>;

/** Hash of a row's content as stored (read back from the database, so verify sees the same). */
export function contentHash(row: HashedRow): string {
  return sha256(
    canonicalJson([
      row.id, row.tenant_id, row.user_id, row.agent_id, row.end_user_id, row.provider_id, row.tool_name,
      row.arguments, row.result, row.status, row.duration, row.confirmed_by, row.error,
      new Date(row.created_at).toISOString(), new Date(row.updated_at).toISOString(),
    ]),
  );
}

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
  return sha256(JSON.stringify([link.prevHash, link.tenantKey, link.seq, link.auditId, link.jobKey, link.contentHash]));
}
