import type { AuditStatus, JobQueue } from '@agentgw/core';
import type { ConfirmationRow } from '@agentgw/db';

const AUDIT_STATUS: Record<'confirmed' | 'rejected' | 'expired', AuditStatus> = {
  confirmed: 'confirmed',
  rejected: 'rejected',
  // The audit log has no `expired`: the call never ran because its caller went away.
  expired: 'failed',
};

/**
 * Patches the held call's audit record with how its confirmation ended (status, confirmedBy,
 * the reason as `error`). The one place that talks to the audit trail, through the core
 * `audit` job, so switching to `@agentgw/audit` is a change here only.
 */
export async function recordAuditOutcome(queue: JobQueue, row: ConfirmationRow, at: Date): Promise<void> {
  if (row.audit_id === null || (row.status !== 'confirmed' && row.status !== 'rejected' && row.status !== 'expired')) return;
  await queue.enqueue(
    'audit',
    {
      id: row.audit_id,
      op: 'update',
      status: AUDIT_STATUS[row.status],
      confirmedBy: row.status === 'confirmed' ? row.decided_by : null,
      error: row.status === 'confirmed' ? null : row.reason,
      at: at.toISOString(),
    },
    // One outcome per confirmation, however often the transition is announced.
    { jobId: `audit-confirmation:${row.id}` },
  );
}
