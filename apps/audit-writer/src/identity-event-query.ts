import type { IdentityEventType } from '@agentgw/audit';
import { isAdmin, type Principal } from '@agentgw/auth';
import { ForbiddenError, ValidationError } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import { sql, type Kysely } from 'kysely';

/** The filters of GET /api/v1/audit/identity-events, after validation. */
export interface IdentityEventFilter {
  type: IdentityEventType | undefined;
  userId: string | undefined;
  /** Inclusive. */
  since: Date | undefined;
  /** Exclusive. */
  until: Date | undefined;
}

/** Whose events a caller reads: every tenant's (a platform admin) or one tenant's (its tenant admin). */
export type IdentityEventScope = { kind: 'all' } | { kind: 'tenant'; tenantId: string };

/** An identity event as the API answers it. */
export interface IdentityEventView {
  id: string;
  type: string;
  actorId: string | null;
  userId: string | null;
  tenantId: string | null;
  clientId: string | null;
  details: Record<string, unknown>;
  createdAt: string;
}

/** Where a page starts: after the last event of the previous one (newest first, ties broken by id); its time to the microsecond, as stored. */
interface Cursor {
  at: string;
  id: string;
}

/** A stored time with all its microseconds (a Date keeps milliseconds: a cursor of one would skip or repeat rows). */
const EXACT_AT = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const EXACT_AT_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * Identity events are an operator's view (sign-ins, consents, connections of other users): a
 * platform admin reads them all, a tenant admin those of their tenant (never the platform-wide
 * ones, such as anonymous client registrations), anyone else none.
 */
export function identityEventScopeOf(principal: Principal): IdentityEventScope {
  if (isAdmin(principal)) return { kind: 'all' };
  if (principal.roles.includes('tenant_admin') && principal.tenantId !== null)
    return { kind: 'tenant', tenantId: principal.tenantId };
  throw new ForbiddenError('Reading identity events requires the admin or tenant_admin role');
}

/** The opaque cursor of the page after the event stored at `at` with `id`. */
function cursorAfter(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

/** A cursor back to its position; anything that is not one the API gave is a 400. */
export function parseCursor(raw: string): Cursor {
  const invalid = () => new ValidationError('cursor: not a cursor this API returned', { field: 'cursor' });
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    typeof value[0] !== 'string' ||
    !EXACT_AT_SHAPE.test(value[0]) ||
    Number.isNaN(Date.parse(value[0])) ||
    typeof value[1] !== 'string' ||
    value[1].length > 200
  )
    throw invalid();
  return { at: value[0], id: value[1] };
}

/** One page of the events the scope and filter select, newest first; `next` is null on the last page. */
export async function listIdentityEvents(
  db: Kysely<Database>,
  scope: IdentityEventScope,
  filter: IdentityEventFilter,
  page: { limit: number; cursor: Cursor | null },
): Promise<{ data: IdentityEventView[]; next: string | null }> {
  let q = db.selectFrom('identity_events').selectAll().select(EXACT_AT.as('exact_at'));
  if (scope.kind === 'tenant') q = q.where('tenant_id', '=', scope.tenantId);
  if (filter.type !== undefined) q = q.where('type', '=', filter.type);
  if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId);
  if (filter.since !== undefined) q = q.where('created_at', '>=', filter.since);
  if (filter.until !== undefined) q = q.where('created_at', '<', filter.until);
  const { cursor } = page;
  if (cursor !== null) {
    const at = sql<Date>`${cursor.at}::timestamptz`;
    q = q.where((eb) =>
      eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', cursor.id)])]),
    );
  }
  // One more than the page tells whether another page follows.
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const shown = rows.slice(0, page.limit);
  const data = shown.map((row) => ({
    id: row.id,
    type: row.type,
    actorId: row.actor_id,
    userId: row.user_id,
    tenantId: row.tenant_id,
    clientId: row.client_id,
    details: row.details,
    createdAt: new Date(row.created_at).toISOString(),
  }));
  const last = shown.at(-1);
  return { data, next: rows.length > page.limit && last ? cursorAfter(last.exact_at, last.id) : null };
}
