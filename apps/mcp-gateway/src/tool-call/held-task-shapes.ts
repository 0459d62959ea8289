import { CANCELLED_REASON, TIMEOUT_REASON } from '@agentgw/confirmations';
import type { ConfirmationResolution } from '@agentgw/core';
import type { HeldTaskRef } from '../extensions/task-ids.js';
import type { McpResult } from '../mcp-context.js';
import { ROUND_ENDED_REASON } from './held-call-round.js';
import type { HeldTaskEntry, HeldTaskOutcome } from './held-task-store.js';
import { refusal } from './tool-call-errors.js';

/* The Task (SEP-2663) shapes of a held call's task (held-call-task.ts). */

/** How often a client is asked to poll (SEP-2663 `pollIntervalMs`). */
const POLL_INTERVAL_MS = 2_000;

/** A task's end as the held call's refusal (the JSON-RPC error the synchronous call is answered with). */
export const refusedOutcome = (
  ref: HeldTaskRef,
  confirmationId: string,
  kind: 'rejected' | 'timeout',
  reason: string,
): HeldTaskOutcome => ({
  kind: 'failed',
  error: refusal({ kind, auditId: ref.auditId, risk: ref.risk, reason, confirmationId }).toObject(),
});

/** The Task (SEP-2663) of an entry: open (`working` unless `extra` says otherwise) or ended as `outcome`. */
export function taskOf(
  taskId: string,
  entry: HeldTaskEntry,
  outcome: HeldTaskOutcome | null,
  extra: McpResult = {},
): McpResult {
  const base = {
    taskId,
    status: 'working',
    createdAt: entry.createdAt,
    lastUpdatedAt: entry.lastUpdatedAt,
    ttlMs: entry.expiresAt - Date.parse(entry.createdAt),
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  if (outcome === null) return { ...base, ...extra };
  if (outcome.kind === 'completed') return { ...base, status: 'completed', result: outcome.result };
  if (outcome.kind === 'cancelled') return { ...base, status: 'cancelled', statusMessage: 'Cancelled by the caller.' };
  return { ...base, status: 'failed', statusMessage: outcome.error.message, error: outcome.error };
}

const APPROVED = 'The call was approved: the next tasks/get runs it and returns its result.';

/**
 * The Task a just-decided confirmation makes of its task, as `tasks/get` would show it but without
 * running the call (a listen's `notifications/tasks`): an end kept already as it is; approved →
 * `working`, the next poll runs it; withdrawn → `cancelled`; rejected, timed out or ended without
 * a decision → `failed` with the refusal the poll would answer.
 */
export function decidedTask(
  taskId: string,
  ref: HeldTaskRef,
  entry: HeldTaskEntry,
  decision: ConfirmationResolution & { id: string; timestamp: string },
): McpResult {
  if (entry.outcome !== null) return taskOf(taskId, entry, entry.outcome);
  const decided = { ...entry, lastUpdatedAt: decision.timestamp };
  if (decision.status === 'confirmed') return taskOf(taskId, decided, null, { statusMessage: APPROVED });
  if (decision.status === 'rejected')
    return taskOf(
      taskId,
      decided,
      decision.reason === CANCELLED_REASON
        ? { kind: 'cancelled' }
        : refusedOutcome(ref, decision.id, 'rejected', decision.reason),
    );
  const ended =
    decision.reason === 'timeout'
      ? refusedOutcome(ref, decision.id, 'timeout', TIMEOUT_REASON)
      : refusedOutcome(ref, decision.id, 'rejected', ROUND_ENDED_REASON);
  return taskOf(taskId, decided, ended);
}
