import type { HeldTaskRef } from '../extensions/task-ids.js';
import type { McpResult } from '../mcp-context.js';
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
