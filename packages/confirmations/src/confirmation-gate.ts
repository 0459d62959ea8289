import type { AuthService } from '@agentgw/auth';
import {
  isAppError,
  newId,
  type ClientConfirmations,
  type ConfirmationGate,
  type GatewayEvents,
  type HeldCall,
  type HoldOptions,
  type HoldOutcome,
  type Unsubscribe,
} from '@agentgw/core';
import type { ConfirmationRow } from '@agentgw/db';
import { callHash } from './call-hash.js';
import { answerFromClient } from './client-answers.js';
import { cancelRound, settleRound } from './held-rounds.js';
import { auditTrailOf } from './audit-outcome.js';
import { findConfirmation, toPayload } from './confirmation-records.js';
import {
  abandonConfirmation,
  APPROVAL_SPENT_REASON,
  consumeConfirmation,
  holdOutcomeOf,
  expireConfirmation,
  markCallerGone,
  resolutionOf,
  spendApproval,
  TIMEOUT_REASON,
  timeOutConfirmation,
  timeoutJobId,
  type ConfirmationDeps,
} from './decisions.js';
import { insertPendingWithinCaps, type PendingCaps } from './pending-caps.js';

export interface ConfirmationGateOptions {
  /** How long a call is held (CONFIRMATION_TIMEOUT_MS; the spec's 5 minutes). */
  timeoutMs: number;
  /** Pending confirmations per agent and per confirmer; one more hold is refused with 429 RATE_LIMITED. */
  maxPending: PendingCaps;
  /** How often `onStatus` hears from a waiting hold (default 5 s). */
  statusIntervalMs?: number;
  /**
   * Past the deadline, how long the holder waits for the deadline job's event before it reads
   * the row and times it out itself (default 2 s): a lost pub/sub message cannot hang a call.
   */
  deadlineGraceMs?: number;
}

/**
 * The gate plus the bus subscription it keeps; `close()` ends it and expires the calls it still
 * holds (the gateway is shutting down). It also takes a person's answer from their own client.
 */
export interface ConfirmationGateHandle extends ConfirmationGate, ClientConfirmations {
  close(): Promise<void>;
}

type ResolvedEvent = GatewayEvents['confirmation.resolved'];
type Wake =
  { kind: 'resolved'; event: ResolvedEvent } | { kind: 'aborted' } | { kind: 'deadline' } | { kind: 'shutdown' };

/**
 * The ConfirmationGate of every place a call is held (unified MCP, per-provider proxy, tool
 * gate), on any replica. A hold stores the pending confirmation, announces it
 * (CONFIRMATION_REQUIRED, push job), schedules its deadline as a delayed job (durable on BullMQ,
 * so no restart loses it) and waits for `confirmation.resolved` from whichever replica decides:
 * no polling. Its caller aborting `signal` (the client went away) leaves it `expired`.
 */
export function createConfirmationGate(
  deps: ConfirmationDeps & { auth: Pick<AuthService, 'verifyConfirmationToken'> },
  options: ConfirmationGateOptions,
): ConfirmationGateHandle {
  const statusIntervalMs = options.statusIntervalMs ?? 5_000;
  const deadlineGraceMs = options.deadlineGraceMs ?? 2_000;
  // One bus subscription per gate; each hold waits on its own entry.
  const waiters = new Map<string, (wake: Wake) => void>();
  // Holds in progress, so close() can let them finish their last write before deps close.
  const active = new Set<Promise<unknown>>();
  let subscription: Promise<Unsubscribe> | undefined;
  let closed = false;

  const listening = (): Promise<Unsubscribe> =>
    (subscription ??= deps.bus
      .subscribe('confirmation.resolved', (event) => waiters.get(event.id)?.({ kind: 'resolved', event }))
      .catch((err: unknown) => {
        subscription = undefined;
        throw err;
      }));

  async function settle(id: string, auditId: string, wake: Wake): Promise<HoldOutcome> {
    if (wake.kind === 'resolved') return release(holdOutcomeOf(wake.event.id, wake.event), auditId);
    if (wake.kind === 'aborted' && (await markCallerGone(deps, id))) return { decision: 'expired', confirmationId: id };
    const moved =
      wake.kind === 'deadline'
        ? await timeOutConfirmation(deps, id)
        : wake.kind === 'shutdown'
          ? await abandonConfirmation(deps, id)
          : undefined;
    const row = moved ?? (await findConfirmation(deps.db, id));
    if (!row) throw new Error(`confirmation ${id} vanished while held`);
    if (row.status === 'pending') return stillPending(id, auditId);
    return release(holdOutcomeOf(id, resolutionOf(row)), auditId);
  }

  /**
   * The holder stopped waiting (deadline or caller gone) and no transition moved its confirmation
   * on: only a row changed behind the state machine's back gets here, and no transition will ever
   * record its call. So the holder does, once: the call does not run, it is answered as timed out
   * and its record ends as the timeout would have ended it (rejected, `Request timed out.`).
   */
  async function stillPending(id: string, auditId: string): Promise<HoldOutcome> {
    deps.logger.error({ confirmationId: id }, 'held call still pending after its hold ended; refused as timed out');
    await auditTrailOf(deps)
      .update(auditId, { status: 'rejected', error: TIMEOUT_REASON })
      .catch((err: unknown) => deps.logger.error({ err, auditId }, 'audit of a confirmation left pending failed'));
    return { decision: 'timeout', confirmationId: id, reason: TIMEOUT_REASON };
  }

  /**
   * A confirmed call runs only by spending its approval (confirmed → consumed): one approval, one
   * run. A spent one refuses the call, and its record (which the decision marked confirmed) says so.
   */
  async function release(outcome: HoldOutcome, auditId: string): Promise<HoldOutcome> {
    if (outcome.decision !== 'confirmed' || (await spendApproval(deps, outcome.confirmationId))) return outcome;
    await auditTrailOf(deps)
      .update(auditId, { status: 'rejected', error: APPROVAL_SPENT_REASON })
      .catch((err: unknown) => deps.logger.error({ err, auditId }, 'audit of a spent approval failed'));
    return { decision: 'rejected', confirmationId: outcome.confirmationId, reason: APPROVAL_SPENT_REASON };
  }

  /** Announces a stored confirmation; if that fails the confirmation is expired, so nobody answers a call that is gone. */
  async function announce(row: ConfirmationRow, call: HeldCall): Promise<void> {
    try {
      await deps.bus.publish('confirmation.required', toPayload(row));
      await deps.queue.enqueue(
        'confirmation-timeout',
        { confirmationId: row.id },
        { delayMs: options.timeoutMs, jobId: timeoutJobId(row.id) },
      );
    } catch (err) {
      await expireConfirmation(deps, row.id).catch(() => undefined);
      throw err;
    }
    const confirmer = call.endUserId ?? call.userId;
    if (confirmer === null) return;
    // Best effort: the stream and the lists already show it; a push outage must not fail the call.
    await deps.queue
      .enqueue(
        'push',
        {
          userId: confirmer,
          title: 'Confirmation required',
          body: `Approve ${call.toolName} (${call.risk} risk)?`,
          // Arguments stay out of push payloads: they travel through Apple's and Google's servers.
          data: {
            type: 'CONFIRMATION_REQUIRED',
            confirmationId: row.id,
            toolName: call.toolName,
            risk: call.risk,
            expiresAt: row.expires_at.toISOString(),
          },
        },
        { jobId: `push:${row.id}` },
      )
      .catch((err: unknown) => deps.logger.warn({ err, confirmationId: row.id }, 'push job not enqueued'));
  }

  /** Stores the pending confirmation; a hold past the pending caps is refused (429) and its call audited as rejected. */
  async function store(input: Parameters<typeof insertPendingWithinCaps>[1]): Promise<ConfirmationRow> {
    try {
      return await insertPendingWithinCaps(deps.db, input, options.maxPending);
    } catch (err) {
      if (isAppError(err) && err.status === 429) {
        await auditTrailOf(deps)
          .update(input.call.auditId, { status: 'rejected', error: err.message })
          .catch((auditErr: unknown) =>
            deps.logger.error({ err: auditErr, auditId: input.call.auditId }, 'audit of a refused hold failed'),
          );
      }
      throw err;
    }
  }

  /** One hold, from storing the confirmation to its outcome (see the factory's comment). */
  async function hold(call: HeldCall, { signal, onStatus }: HoldOptions): Promise<HoldOutcome> {
    await listening();
    const id = newId();
    const createdAt = deps.clock.now();
    let wake!: (w: Wake) => void;
    const woken = new Promise<Wake>((resolve) => {
      wake = resolve;
    });
    waiters.set(id, wake);
    const onAbort = () => wake({ kind: 'aborted' });
    let deadline: NodeJS.Timeout | undefined;
    let ticker: NodeJS.Timeout | undefined;
    try {
      const row = await store({ id, call, createdAt, expiresAt: new Date(createdAt.getTime() + options.timeoutMs) });
      await announce(row, call);
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      deadline = setTimeout(() => wake({ kind: 'deadline' }), options.timeoutMs + deadlineGraceMs);
      if (onStatus) {
        const started = Date.now();
        const status = () =>
          onStatus({ confirmationId: id, message: 'Waiting for confirmation', elapsedMs: Date.now() - started });
        status();
        ticker = setInterval(status, statusIntervalMs);
      }
      return await settle(id, call.auditId, await woken);
    } finally {
      clearTimeout(deadline);
      clearInterval(ticker);
      signal.removeEventListener('abort', onAbort);
      waiters.delete(id);
    }
  }

  return {
    hold(call, options) {
      if (closed) return Promise.reject(new Error('confirmation gate is closed'));
      const held = hold(call, options);
      const tracked = held.catch(() => undefined).finally(() => active.delete(tracked));
      active.add(tracked);
      return held;
    },

    async redeem(token, call) {
      let confirmationId: string;
      try {
        ({ confirmationId } = await deps.auth.verifyConfirmationToken(token));
      } catch {
        return false;
      }
      return consumeConfirmation(deps, confirmationId, callHash(call));
    },

    answerFromClient: (id, call, answer) => answerFromClient(deps, id, call, answer),

    async openRound(call) {
      if (closed) throw new Error('confirmation gate is closed');
      const id = newId();
      const createdAt = deps.clock.now();
      const expiresAt = new Date(createdAt.getTime() + options.timeoutMs);
      await announce(await store({ id, call, createdAt, expiresAt }), call);
      return { confirmationId: id, expiresAt };
    },

    settleRound: (id, call) => settleRound(deps, id, call),

    cancelRound: (id, call) => cancelRound(deps, id, call),

    async close() {
      closed = true;
      // Calls still held here cannot be released any more: their confirmations expire (the call
      // was not run) and their audit records end failed, so nothing is left pending.
      for (const wake of waiters.values()) wake({ kind: 'shutdown' });
      await Promise.all(active);
      const unsubscribe = await subscription?.catch(() => undefined);
      subscription = undefined;
      await unsubscribe?.();
    },
  };
}
