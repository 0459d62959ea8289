import { createAuditTrail, type AuditTrail } from '@agentgw/audit';
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
 * Patches the held call's audit record with how its confirmation ended (status, confirmedBy,
 * the reason as `error`). Called once per confirmation: only the transition that wins the
 * conditional UPDATE gets here.
 */
export async function recordAuditOutcome(trail: AuditTrail, row: ConfirmationRow): Promise<void> {
  if (row.audit_id === null || (row.status !== 'confirmed' && row.status !== 'rejected' && row.status !== 'expired')) return;
  await trail.update(row.audit_id, {
    status: AUDIT_STATUS[row.status],
    confirmedBy: row.status === 'confirmed' ? row.decided_by : null,
    error: row.status === 'confirmed' ? null : row.reason,
  });
}
