import { maskBody } from '@agentgw/audit';
import type { ConfirmationPayload, ConfirmationStatus, HeldCall } from '@agentgw/core';
import { json, type ConfirmationRow, type Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { callHash } from './call-hash.js';
import { whereConfirmationVisible, type Viewer } from './visibility.js';

/** A confirmation as the API shows it: the event payload plus where it stands. */
export interface Confirmation extends ConfirmationPayload {
  status: ConfirmationStatus;
  reason: string | null;
  decidedBy: string | null;
  decidedAt: string | null;
}

/**
 * A held call's arguments as stored and shown (API, stream, events): masked like the audit log
 * (secret-named fields, oversized bodies), since every viewer of the confirmation reads them.
 */
const shownArguments = (args: unknown): Record<string, unknown> => maskBody(args ?? {}) as Record<string, unknown>;

/** The CONFIRMATION_REQUIRED payload of a stored confirmation (arguments masked, rows stored before masking too). */
export function toPayload(row: ConfirmationRow): ConfirmationPayload {
  return {
    id: row.id,
    tool: { name: row.tool_name, arguments: shownArguments(row.arguments) },
    risk: { level: row.risk_level },
    providerId: row.provider_id,
    agentId: row.agent_id,
    userId: row.user_id,
    endUserId: row.end_user_id,
    tenantId: row.tenant_id,
    timestamp: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  };
}

/** The API shape of a stored confirmation. */
export function toConfirmation(row: ConfirmationRow): Confirmation {
  return {
    ...toPayload(row),
    status: row.status,
    reason: row.reason,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at?.toISOString() ?? null,
  };
}

/**
 * Stores a new pending confirmation for `call`, due to time out at `expiresAt`: its arguments
 * masked, its call hash over the raw ones (a token still binds to the exact call).
 */
export async function insertPending(
  db: Kysely<Database>,
  input: { id: string; call: HeldCall; createdAt: Date; expiresAt: Date },
): Promise<ConfirmationRow> {
  const { call } = input;
  return db
    .insertInto('confirmations')
    .values({
      id: input.id,
      status: 'pending',
      user_id: call.userId,
      end_user_id: call.endUserId,
      agent_id: call.agentId,
      provider_id: call.providerId,
      tenant_id: call.tenantId,
      tool_name: call.toolName,
      arguments: json(shownArguments(call.arguments)),
      risk_level: call.risk,
      audit_id: call.auditId,
      call_hash: callHash(call),
      created_at: input.createdAt,
      expires_at: input.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** One confirmation by id, whoever asks (callers apply the visibility rule). */
export function findConfirmation(db: Kysely<Database>, id: string): Promise<ConfirmationRow | undefined> {
  return db.selectFrom('confirmations').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface ListQuery {
  status?: ConfirmationStatus;
  limit: number;
  offset: number;
}

/** The confirmations `viewer` may see, newest first, with the total for paging. */
export async function listVisible(
  db: Kysely<Database>,
  viewer: Viewer,
  query: ListQuery,
): Promise<{ rows: ConfirmationRow[]; total: number }> {
  let base = db.selectFrom('confirmations').where((eb) => whereConfirmationVisible(eb, viewer));
  if (query.status) base = base.where('status', '=', query.status);
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('created_at', 'desc').orderBy('id').limit(query.limit).offset(query.offset).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/**
 * Pending confirmations `viewer` may see that can still be answered, oldest first; with
 * `createdFrom`, only those raised at or after it (a reconnecting stream's catch-up).
 */
export function listPendingVisible(
  db: Kysely<Database>,
  viewer: Viewer,
  now: Date,
  createdFrom?: Date,
): Promise<ConfirmationRow[]> {
  let query = db
    .selectFrom('confirmations')
    .selectAll()
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .where((eb) => whereConfirmationVisible(eb, viewer));
  if (createdFrom) query = query.where('created_at', '>=', createdFrom);
  // Bounded: a reconnecting client or a polling one gets at most this many at once.
  return query.orderBy('created_at').orderBy('id').limit(500).execute();
}
