import { actingUserOf, isAdmin, type Principal } from '@agentgw/auth';
import { AUDIT_STATUSES, type AuditStatus, type ConfirmationCarrier } from '@agentgw/core';
import type { AuditLogRow, Database } from '@agentgw/db';
import { sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder } from 'kysely';
import { PLACEHOLDER_CREATED_AT } from './batch-writer.js';

/** The filters of GET /api/v1/audit/logs, stats and export, after validation. */
export interface AuditFilter {
  userId?: string;
  agentId?: string;
  tenantId?: string;
  toolName?: string;
  status?: AuditStatus;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  before?: Date;
}

/** An audit entry as the API returns it. */
export interface AuditEntry {
  id: string;
  userId: string | null;
  agentId: string | null;
  endUserId: string | null;
  providerId: string | null;
  tenantId: string | null;
  /** The OAuth client (MCP app) the user signed in with; null for any other credential. */
  oauthClientId: string | null;
  toolName: string;
  arguments: unknown;
  result: unknown;
  status: AuditStatus;
  duration: number | null;
  confirmedBy: string | null;
  /** A held call's: how its confirmation was answered (the carrier, and the OAuth client from a person's own MCP client); null when nobody answered. */
  decidedVia: { carrier: ConfirmationCarrier; clientId: string | null } | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * Who sees what (spec: "non-admins can only see their own entries"): an admin sees everything
 * and may filter by any user and tenant; a tenant admin sees every entry of their own tenant
 * (tenant_id is forced to it, user_id is honoured within it); everyone else sees only their own
 * entries (user_id is forced to themselves).
 */
export function visibleFilter(principal: Principal, requested: AuditFilter): AuditFilter {
  if (isAdmin(principal)) return requested;
  if (principal.roles.includes('tenant_admin') && principal.tenantId !== null) {
    return { ...requested, tenantId: principal.tenantId };
  }
  // A principal without a user (not possible with a user JWT) matches no user at all.
  return { ...requested, userId: actingUserOf(principal) ?? '' };
}

type AuditQuery<O> = SelectQueryBuilder<Database, 'audit_logs', O>;

/**
 * The filtered set; placeholders (updates still waiting for their create, created_at
 * -infinity) are never shown.
 */
function filtered(db: Kysely<Database>, f: AuditFilter): AuditQuery<object> {
  let q = db
    .selectFrom('audit_logs')
    .where('created_at', '>', sql<Date>`${PLACEHOLDER_CREATED_AT}::timestamptz`) as AuditQuery<object>;
  if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
  if (f.agentId !== undefined) q = q.where('agent_id', '=', f.agentId);
  if (f.tenantId !== undefined) q = q.where('tenant_id', '=', f.tenantId);
  if (f.toolName !== undefined) q = q.where('tool_name', '=', f.toolName);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.before !== undefined) q = q.where('created_at', '<', f.before);
  return q;
}

const ENTRY_COLUMNS = [
  'id',
  'user_id',
  'agent_id',
  'end_user_id',
  'provider_id',
  'tenant_id',
  'oauth_client_id',
  'tool_name',
  'arguments',
  'result',
  'status',
  'duration',
  'confirmed_by',
  'decided_via',
  'decided_client_id',
  'error',
  'created_at',
  'updated_at',
] as const;

type EntryRow = Pick<AuditLogRow, (typeof ENTRY_COLUMNS)[number]>;

/** Row to API shape. */
export function toEntry(row: EntryRow): AuditEntry {
  return {
    id: row.id,
    userId: row.user_id,
    agentId: row.agent_id,
    endUserId: row.end_user_id,
    providerId: row.provider_id,
    tenantId: row.tenant_id,
    oauthClientId: row.oauth_client_id,
    toolName: row.tool_name ?? '',
    arguments: row.arguments,
    result: row.result,
    status: row.status,
    duration: row.duration,
    confirmedBy: row.confirmed_by,
    decidedVia: row.decided_via === null ? null : { carrier: row.decided_via, clientId: row.decided_client_id },
    error: row.error,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** One page, newest first, with the exact size of the whole filtered set. */
export async function listEntries(
  db: Kysely<Database>,
  filter: AuditFilter,
  page: { limit: number; offset: number },
): Promise<{ data: AuditEntry[]; total: number }> {
  const [rows, count] = await Promise.all([
    filtered(db, filter)
      .select(ENTRY_COLUMNS)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    filtered(db, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { data: rows.map(toEntry), total: Number(count.n) };
}

/** One entry under the same visibility as the list; undefined when absent or not visible. */
export async function getEntry(db: Kysely<Database>, filter: AuditFilter, id: string): Promise<AuditEntry | undefined> {
  const row = await filtered(db, filter).select(ENTRY_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && toEntry(row);
}

/** Counts per status and the mean duration (ms, of entries that have one) of the filtered set. */
export async function auditStats(
  db: Kysely<Database>,
  filter: AuditFilter,
): Promise<{ total: number; byStatus: Record<AuditStatus, number>; avgDuration: number | null }> {
  const rows = await filtered(db, filter)
    .select((eb: ExpressionBuilder<Database, 'audit_logs'>) => [
      eb.ref('status').as('status'),
      eb.fn.countAll<number>().as('n'),
      eb.fn.sum<number | null>('duration').as('sum'),
      eb.fn.count<number>('duration').as('timed'),
    ])
    .groupBy('status')
    .execute();
  const byStatus = Object.fromEntries(AUDIT_STATUSES.map((s) => [s, 0])) as Record<AuditStatus, number>;
  let total = 0;
  let sum = 0;
  let timed = 0;
  for (const r of rows) {
    byStatus[r.status] = Number(r.n);
    total += Number(r.n);
    sum += Number(r.sum ?? 0);
    timed += Number(r.timed);
  }
  return { total, byStatus, avgDuration: timed === 0 ? null : Math.round((sum / timed) * 100) / 100 };
}

/** Rows per query while exporting: bounded memory whatever the size of the set. */
const EXPORT_PAGE = 1000;

/**
 * The filtered set, newest first, page by page on the (created_at, id) key rather than OFFSET,
 * so a long export costs the same per page and sees no row twice.
 */
export async function* exportEntries(db: Kysely<Database>, filter: AuditFilter): AsyncGenerator<AuditEntry> {
  let after: { createdAt: Date; id: string } | undefined;
  for (;;) {
    let q = filtered(db, filter).select(ENTRY_COLUMNS);
    if (after) {
      const { createdAt, id } = after;
      q = q.where((eb) =>
        eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]),
      );
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(EXPORT_PAGE).execute();
    for (const row of rows) yield toEntry(row);
    if (rows.length < EXPORT_PAGE) return;
    const last = rows[rows.length - 1]!;
    after = { createdAt: new Date(last.created_at), id: last.id };
  }
}
