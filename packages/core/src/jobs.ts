/** Work that must not be lost, carried by the JobQueue (BullMQ, or in-process). */
export type AuditStatus = 'pending' | 'confirmed' | 'rejected' | 'completed' | 'failed';

export interface AuditRecordJob {
  /** Assigned by the producer so a redelivered job writes the same row once. */
  id: string;
  /** `create` inserts; `update` patches status/result/duration of an existing row. */
  op: 'create' | 'update';
  userId?: string | null;
  agentId?: string | null;
  endUserId?: string | null;
  providerId?: string | null;
  tenantId?: string | null;
  toolName?: string;
  arguments?: unknown;
  result?: unknown;
  /** Required on a create; absent on an update that leaves the status as it is. */
  status?: AuditStatus;
  duration?: number | null;
  confirmedBy?: string | null;
  error?: string | null;
  at: string;
  /**
   * Unique per enqueued job (the create's is `c:<id>`): the writer records each job once, so a
   * redelivery is recognised. Optional for older producers; the writer derives one when absent.
   */
  key?: string;
  /** Producer-local counter: orders two updates of one record stamped in the same millisecond. */
  seq?: number;
}

export interface GatewayJobs {
  audit: AuditRecordJob;
  /**
   * Audit records coalesced by the producer (records issued in the same event-loop turn travel
   * as one job), so the queue's per-job cost is paid once per group rather than per record.
   */
  'audit-bulk': { records: AuditRecordJob[] };
  /** Deletes audit entries past AUDIT_RETENTION_DAYS; `slot` (hour number) names one run so replicas schedule it once. */
  'audit-retention': { slot: number };
  /** Deletes decided confirmations past CONFIRMATION_RETENTION_DAYS; `slot` (hour number) names one run so replicas schedule it once. */
  'confirmation-retention': { slot: number };
  /** Fires when a pending confirmation's hold time has run out. */
  'confirmation-timeout': { confirmationId: string };
  /** Notifies a user's active devices; with `deviceId`, that one device only (how a failed delivery is retried alone). */
  push: { userId: string; title: string; body: string; data: Record<string, unknown>; deviceId?: string };
}

export type JobName = keyof GatewayJobs;
