import { z } from 'zod';
import { AUDIT_STATUSES, CONFIRMATION_CARRIERS } from './enums.js';

/**
 * Every job the JobQueue carries, by name, as a zod schema: producers get their types from it
 * (`GatewayJobs` in jobs.ts), consumers that take untrusted-shaped data parse with it. Messages
 * name what is wrong so a poison job's failure reason is readable.
 */

const MAX_ID = 200;
/** ISO 8601 date-time with Z or an offset, as producers stamp `at`. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const text = (min: number, max: number) => {
  const error = `must be ${min}-${max} characters`;
  return z.string({ error: 'must be a string' }).min(min, { error }).max(max, { error });
};
const int = (max: number) => {
  const error = `must be an integer from 0 to ${max}`;
  return z.int({ error }).min(0, { error }).max(max, { error });
};
const ref = text(1, MAX_ID).nullable();
const status = z.enum(AUDIT_STATUSES, { error: 'must be a known status' });

/** What every audit job carries, create or update. */
const auditJobBase = {
  /** Assigned by the producer so a redelivered job writes the same row once. */
  id: text(1, MAX_ID),
  /** Unique per enqueued job (the create's is `c:<id>`): the writer records each job once, so a redelivery is recognised. */
  key: text(1, 300),
  /** Producer-local counter: orders two updates of one record stamped in the same millisecond. */
  seq: int(Number.MAX_SAFE_INTEGER),
  at: z
    .string({ error: 'must be an ISO date-time' })
    .refine((v) => ISO_DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)), { error: 'must be an ISO date-time' }),
};

/** Inserts an audit record: everything known when the call is first seen. */
const auditCreateJob = z.object({
  op: z.literal('create'),
  ...auditJobBase,
  userId: ref,
  agentId: ref,
  endUserId: ref,
  providerId: ref,
  tenantId: ref,
  /** The OAuth client (MCP app) the user signed in with, when the call came with an OAuth access token (optional). */
  oauthClientId: ref.optional(),
  toolName: text(1, 512),
  arguments: z.unknown(),
  status,
  /** A refusal's reason, so a call refused before it ran is one job (optional). */
  error: text(0, 10_000).nullable().optional(),
  /** A forwarded call's outcome, when it ended before its create left the producer: one job for the call (optional). */
  result: z.unknown().optional(),
  duration: int(2_147_483_647).nullable().optional(),
});

/** Patches an existing record (or a placeholder, when it overtakes its create); absent fields stay as they are. */
const auditUpdateJob = z.object({
  op: z.literal('update'),
  ...auditJobBase,
  patch: z.object({
    status: status.optional(),
    result: z.unknown().optional(),
    duration: int(2_147_483_647).nullable().optional(),
    confirmedBy: ref.optional(),
    /** How a held call's confirmation was answered: the carrier, and the OAuth client that answered from the person's own MCP client. */
    decidedVia: z
      .object({ carrier: z.enum(CONFIRMATION_CARRIERS, { error: 'must be a known carrier' }), clientId: ref })
      .optional(),
    error: text(0, 10_000).nullable().optional(),
  }),
});

/** One audit record job: a create with every field it needs, or an update of one by id. */
export const auditRecordJobSchema = z.discriminatedUnion('op', [auditCreateJob, auditUpdateJob], {
  error: 'must be create or update',
});

/** The job catalog: job name → the schema of its data. */
export const jobCatalog = {
  /**
   * Audit records coalesced by the producer (records issued in the same event-loop turn travel
   * as one job), so the queue's per-job cost is paid once per group rather than per record.
   */
  'audit-bulk': z.object({ records: z.array(auditRecordJobSchema) }),
  /** Deletes audit entries past AUDIT_RETENTION_DAYS; `slot` (hour number) names one run so replicas schedule it once. */
  'audit-retention': z.object({ slot: z.int() }),
  /** Deletes decided confirmations past CONFIRMATION_RETENTION_DAYS; `slot` (hour number) names one run so replicas schedule it once. */
  'confirmation-retention': z.object({ slot: z.int() }),
  /** Fires when a pending confirmation's hold time has run out. */
  'confirmation-timeout': z.object({ confirmationId: z.string() }),
  /** Notifies a user's active devices; with `deviceId`, that one device only (how a failed delivery is retried alone). */
  push: z.object({
    userId: z.string(),
    title: z.string(),
    body: z.string(),
    data: z.record(z.string(), z.unknown()),
    deviceId: z.string().optional(),
  }),
} as const;
