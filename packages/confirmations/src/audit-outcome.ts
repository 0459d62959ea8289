import { createAuditTrail, type AuditPatch, type AuditTrail } from '@agentgw/audit';
import type { AuditStatus, Clock, ConfirmationOutcome, JobQueue } from '@agentgw/core';
import type { ConfirmationRow } from '@agentgw/db';

const AUDIT_STATUS: Record<ConfirmationOutcome, AuditStatus> = {
  confirmed: 'confirmed',
  rejected: 'rejected',
  // The audit log has no `expired`: the call never ran because its caller went away.
  expired: 'failed',
};

/** One audit trail per queue, so its per-process ordering of updates holds across confirmations. */
const trails = new WeakMap<JobQueue, AuditTrail>();

/** The trail given in deps, or this queue's own. */
export function auditTrailOf(deps: { queue: JobQueue; clock: Clock; audit?: AuditTrail }): AuditTrail {
  if (deps.audit) return deps.audit;
  let trail = trails.get(deps.queue);
  if (!trail) trails.set(deps.queue, (trail = createAuditTrail(deps)));
  return trail;
}

/**
 * The part of the audit record a confirmation's end owns, and nothing else: confirmed → the
 * status and who confirmed; rejected or expired → the status and the reason as `error`; and,
 * when someone answered, the carrier and the OAuth client it came through (`decidedVia`). A field
 * it does not own is left out, never written as null, so the patch erases nothing another writer
 * set. Null for a row that has not ended (pending) or was ended before (consumed).
 */
function auditPatchOf(row: ConfirmationRow): AuditPatch | null {
  const answered =
    row.decided_via === null ? {} : { decidedVia: { carrier: row.decided_via, clientId: row.decided_client_id } };
  switch (row.status) {
    case 'confirmed':
      return { status: 'confirmed', confirmedBy: row.decided_by, ...answered };
    case 'rejected':
    case 'expired':
      return { status: AUDIT_STATUS[row.status], ...(row.reason !== null && { error: row.reason }), ...answered };
    case 'pending':
    case 'consumed':
      return null;
  }
}

/**
 * Patches the held call's audit record with how its confirmation ended (see auditPatchOf).
 * Called once per confirmation: only the transition that wins the conditional UPDATE gets here.
 */
export async function recordAuditOutcome(trail: AuditTrail, row: ConfirmationRow): Promise<void> {
  const patch = auditPatchOf(row);
  if (row.audit_id === null || patch === null) return;
  await trail.update(row.audit_id, patch);
}
