import type { AuditTrail } from '@agentgw/audit';
import type {
  Clock,
  ConfirmationCarrier,
  ConfirmationOutcome,
  ConfirmationResolution,
  ConfirmationResolved,
  EventBus,
  HoldOutcome,
  JobQueue,
  Logger,
} from '@agentgw/core';
import type { ConfirmationRow, Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { auditTrailOf, recordAuditOutcome } from './audit-outcome.js';
import { findConfirmation } from './confirmation-records.js';

/** What the confirmation state machine needs; a subset of every service's deps. */
export interface ConfirmationDeps {
  db: Kysely<Database>;
  bus: EventBus;
  queue: JobQueue;
  clock: Clock;
  logger: Logger;
  /** Where outcomes are recorded (default: an audit trail on `queue`). */
  audit?: AuditTrail;
}

/** Reason recorded when nobody decided in time (spec, Errors). */
export const TIMEOUT_REASON = 'Request timed out.';
/**
 * Kept on a pending confirmation whose held caller disconnected: nobody waits for its answer any
 * more, so confirming it issues an exact-call token instead of releasing a call.
 */
export const CALLER_GONE_REASON = 'The caller went away before a decision.';
/** Reason recorded when a stored confirmation could not be announced (nobody can see it to answer). */
export const EXPIRED_REASON = 'The confirmation could not be announced.';
/** Reason recorded when the gateway holding the call shut down (or crashed) before a decision. */
export const SHUTDOWN_REASON = 'The gateway shut down before a decision; the call was not run.';
/** Reason recorded when the agent that made the call was disabled or deleted before a decision. */
export const AGENT_DISABLED_REASON = 'The agent that made this call is disabled.';
/** Why a call is refused whose approval was already used (a replayed round's retry; a hold, by nothing in the normal course). */
export const APPROVAL_SPENT_REASON = 'The approval was already used.';
/** Reason recorded when the caller withdrew its held call (a task's `tasks/cancel`) before a decision. */
export const CANCELLED_REASON = 'The caller cancelled the call before a decision.';
/** Reason recorded for a rejection that gave none. */
export const DEFAULT_REJECT_REASON = 'Rejected by the confirmer.';

/** Job id of a confirmation's deadline, so a decision can cancel it and a re-enqueue is a no-op. */
export const timeoutJobId = (confirmationId: string): string => `confirmation-timeout:${confirmationId}`;

/** Who answered and where (null for an end no one answered: a timeout, a disabled agent, an unannounced one). */
type Answerer = { via: ConfirmationCarrier; clientId: string | null } | null;
type Outcome = { status: ConfirmationOutcome; reason: string | null; decidedBy: string | null; answerer: Answerer };

/**
 * Who waits for a pending confirmation's answer: `held`, its call (released or refused by the
 * answer), or `caller_gone`, nobody (a confirming answer then carries the exact-call token).
 */
export type Waiting = 'held' | 'caller_gone';

/**
 * How a decided row ended. The one place a stored timeout is told apart from a rejection by its
 * reason: the spec stores it as `rejected` with `Request timed out.`; from here on it is typed.
 */
export function resolutionOf(row: ConfirmationRow): ConfirmationResolution {
  switch (row.status) {
    case 'confirmed':
    case 'consumed':
      return { status: 'confirmed', confirmedBy: row.decided_by };
    case 'expired':
      return { status: 'expired', reason: row.reason === SHUTDOWN_REASON ? 'shutdown' : 'unannounced' };
    case 'rejected':
      return row.reason === TIMEOUT_REASON && row.decided_by === null
        ? { status: 'expired', reason: 'timeout' }
        : { status: 'rejected', reason: row.reason ?? DEFAULT_REJECT_REASON };
    case 'pending':
      throw new Error(`confirmation ${row.id} is still pending`);
  }
}

/** What a held call (or a round's retry) comes to when its confirmation ended as `resolution`. */
export function holdOutcomeOf(confirmationId: string, resolution: ConfirmationResolution): HoldOutcome {
  switch (resolution.status) {
    case 'confirmed':
      return { decision: 'confirmed', confirmationId, confirmedBy: resolution.confirmedBy };
    case 'rejected':
      return { decision: 'rejected', confirmationId, reason: resolution.reason };
    case 'expired':
      return resolution.reason === 'timeout'
        ? { decision: 'timeout', confirmationId, reason: TIMEOUT_REASON }
        : { decision: 'expired', confirmationId };
  }
}

/** The CONFIRMATION_RESOLVED event of a decided row. */
export function resolvedEvent(row: ConfirmationRow, at: Date): ConfirmationResolved {
  return {
    ...resolutionOf(row),
    id: row.id,
    userId: row.user_id,
    endUserId: row.end_user_id,
    tenantId: row.tenant_id,
    timestamp: (row.decided_at ?? at).toISOString(),
  };
}

/**
 * Moves a confirmation out of `pending` if, and only if, it still is (and, for an answer, its
 * deadline has not passed): the conditional UPDATE is what makes a second decision, racing on
 * another replica, a no-op. The one that wins announces it. Tried as `held` first, then as
 * `caller_gone`: each try is atomic, and a row only ever moves from the first to the second,
 * so the winner knows whether a call was waiting for it.
 */
async function leavePending(
  deps: ConfirmationDeps,
  id: string,
  outcome: Outcome,
  options: { beforeDeadline: boolean },
): Promise<{ row: ConfirmationRow; waiting: Waiting } | undefined> {
  for (const waiting of ['held', 'caller_gone'] as const) {
    const now = deps.clock.now();
    let update = deps.db
      .updateTable('confirmations')
      .set({
        status: outcome.status,
        reason: outcome.reason,
        decided_by: outcome.decidedBy,
        decided_at: now,
        decided_via: outcome.answerer?.via ?? null,
        decided_client_id: outcome.answerer?.clientId ?? null,
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where((eb) => (waiting === 'held' ? eb('reason', 'is', null) : eb('reason', '=', CALLER_GONE_REASON)));
    if (options.beforeDeadline) update = update.where('expires_at', '>', now);
    const row = await update.returningAll().executeTakeFirst();
    if (row) {
      await announce(deps, row, now, waiting);
      return { row, waiting };
    }
  }
  return undefined;
}

/**
 * Tells every replica (the held call and the SSE streams), drops the deadline job and patches
 * the held call's audit record (already closed when its caller went away). The decision is
 * already stored: a failure here is logged, not thrown, and a holder that missed the event
 * reads the row at its deadline.
 */
async function announce(deps: ConfirmationDeps, row: ConfirmationRow, at: Date, waiting: Waiting): Promise<void> {
  const steps: [string, () => Promise<void>][] = [
    ['publish', () => deps.bus.publish('confirmation.resolved', resolvedEvent(row, at))],
    // A no-op when the deadline job is the one running this (a running job is not removed).
    ['cancel deadline', () => deps.queue.cancel('confirmation-timeout', timeoutJobId(row.id))],
  ];
  if (waiting === 'held') steps.push(['audit', () => recordAuditOutcome(auditTrailOf(deps), row)]);
  await Promise.all(
    steps.map(([step, run]) =>
      run().catch((err: unknown) =>
        deps.logger.error({ err, confirmationId: row.id, step }, 'confirmation announcement failed'),
      ),
    ),
  );
}

export type DecisionResult =
  { applied: true; row: ConfirmationRow; waiting: Waiting } | { applied: false; row: ConfirmationRow | undefined };

/** A confirmer's answer and the carrier it came through (`clientId`: the OAuth client, for the `client` carrier). */
export interface ConfirmerAnswer {
  confirmed: boolean;
  reason?: string | null;
  decidedBy: string | null;
  via: ConfirmationCarrier;
  clientId?: string | null;
}

/**
 * A confirmer's answer. Not applied when the confirmation is unknown, already decided, or past
 * its deadline (then it is timed out on the spot, as the deadline job would have done).
 */
export async function decideConfirmation(
  deps: ConfirmationDeps,
  id: string,
  answer: ConfirmerAnswer,
): Promise<DecisionResult> {
  const answerer: Answerer = { via: answer.via, clientId: answer.clientId ?? null };
  const outcome: Outcome = answer.confirmed
    ? { status: 'confirmed', reason: answer.reason ?? null, decidedBy: answer.decidedBy, answerer }
    : { status: 'rejected', reason: answer.reason ?? DEFAULT_REJECT_REASON, decidedBy: answer.decidedBy, answerer };
  const left = await leavePending(deps, id, outcome, { beforeDeadline: true });
  if (left) return { applied: true, ...left };
  const current = await findConfirmation(deps.db, id);
  if (current?.status === 'pending') return { applied: false, row: (await timeOutConfirmation(deps, id)) ?? current };
  return { applied: false, row: current };
}

/** The deadline passed: pending → rejected with `Request timed out.` (no-op once decided). */
export async function timeOutConfirmation(deps: ConfirmationDeps, id: string): Promise<ConfirmationRow | undefined> {
  return (
    await leavePending(
      deps,
      id,
      { status: 'rejected', reason: TIMEOUT_REASON, decidedBy: null, answerer: null },
      { beforeDeadline: false },
    )
  )?.row;
}

/** Whether the agent exists and is enabled (a deleted agent is not). */
export async function agentIsActive(db: Kysely<Database>, agentId: string): Promise<boolean> {
  const agent = await db.selectFrom('agents').select('is_active').where('id', '=', agentId).executeTakeFirst();
  return agent?.is_active === true;
}

/**
 * The kill switch reaches held calls: when `agentId` is disabled or deleted, each of its pending
 * confirmations is rejected (the held calls end with 403, the consoles stop offering them).
 * Every replica may run it at once: each row moves once. Returns how many it moved.
 */
export async function rejectIfAgentInactive(deps: ConfirmationDeps, agentId: string): Promise<number> {
  if (await agentIsActive(deps.db, agentId)) return 0;
  const pending = await deps.db
    .selectFrom('confirmations')
    .select('id')
    .where('status', '=', 'pending')
    .where('agent_id', '=', agentId)
    .execute();
  let moved = 0;
  for (const { id } of pending) {
    if (await rejectForInactiveAgent(deps, id)) moved += 1;
  }
  return moved;
}

/** One confirmation whose agent is disabled: pending → rejected (no-op once decided). */
export async function rejectForInactiveAgent(deps: ConfirmationDeps, id: string): Promise<ConfirmationRow | undefined> {
  return (
    await leavePending(
      deps,
      id,
      { status: 'rejected', reason: AGENT_DISABLED_REASON, decidedBy: null, answerer: null },
      { beforeDeadline: false },
    )
  )?.row;
}

/** The caller withdrew the call (a held-call task cancelled): pending → rejected with CANCELLED_REASON, no longer approvable (no-op once decided). */
export async function cancelConfirmation(deps: ConfirmationDeps, id: string): Promise<ConfirmationRow | undefined> {
  return (
    await leavePending(
      deps,
      id,
      { status: 'rejected', reason: CANCELLED_REASON, decidedBy: null, answerer: null },
      { beforeDeadline: false },
    )
  )?.row;
}

/** It cannot be answered (its announcement failed): pending → expired (no-op once decided). */
export async function expireConfirmation(deps: ConfirmationDeps, id: string): Promise<ConfirmationRow | undefined> {
  return (
    await leavePending(
      deps,
      id,
      { status: 'expired', reason: EXPIRED_REASON, decidedBy: null, answerer: null },
      { beforeDeadline: false },
    )
  )?.row;
}

/**
 * The gateway that holds the call is shutting down (or crashed, found by the sweep on start):
 * nothing can release it any more, so pending → expired with SHUTDOWN_REASON and its audit
 * record ends `failed` with that reason (no-op once decided).
 */
export async function abandonConfirmation(deps: ConfirmationDeps, id: string): Promise<ConfirmationRow | undefined> {
  return (
    await leavePending(
      deps,
      id,
      { status: 'expired', reason: SHUTDOWN_REASON, decidedBy: null, answerer: null },
      { beforeDeadline: false },
    )
  )?.row;
}

/**
 * The held caller went away: the confirmation stays pending (and answerable until its deadline)
 * with nobody waiting, and the held call's audit record ends as failed. False once decided.
 */
export async function markCallerGone(deps: ConfirmationDeps, id: string): Promise<boolean> {
  const row = await deps.db
    .updateTable('confirmations')
    .set({ reason: CALLER_GONE_REASON })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('reason', 'is', null)
    .returning(['id', 'audit_id'])
    .executeTakeFirst();
  if (!row) return false;
  if (row.audit_id !== null) {
    await auditTrailOf(deps)
      .update(row.audit_id, { status: 'failed', error: CALLER_GONE_REASON })
      .catch((err: unknown) => deps.logger.error({ err, confirmationId: id }, 'audit of a gone caller failed'));
  }
  return true;
}

/**
 * The held call was released: confirmed → consumed, so its approval cannot let a call through
 * a second time. False when it was spent already (the call must not run).
 */
export async function spendApproval(deps: Pick<ConfirmationDeps, 'db'>, id: string): Promise<boolean> {
  const row = await deps.db
    .updateTable('confirmations')
    .set({ status: 'consumed' })
    .where('id', '=', id)
    .where('status', '=', 'confirmed')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Spends an exact-call approval: confirmed → consumed, only for the call it was given for.
 * The conditional UPDATE makes a replay (or a race of two) succeed once.
 */
export async function consumeConfirmation(
  deps: Pick<ConfirmationDeps, 'db'>,
  id: string,
  hash: string,
): Promise<boolean> {
  const row = await deps.db
    .updateTable('confirmations')
    .set({ status: 'consumed' })
    .where('id', '=', id)
    .where('status', '=', 'confirmed')
    .where('call_hash', '=', hash)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}
