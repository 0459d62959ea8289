import { auditRecordJobSchema, type AuditRecordJob, type AuditStatus, type ConfirmationCarrier } from '@agentgw/core';

/**
 * Status stages: a later stage wins over an earlier one whatever the order jobs arrive in.
 * `rejected` (denied, or a human said no) is final: a tool-gate caller completing its own
 * refused call later cannot turn the record into `completed`.
 */
const STAGE: Record<AuditStatus, number> = { pending: 0, confirmed: 1, completed: 2, failed: 2, rejected: 3 };

/** A mutable field's value together with the version of the job that set it. */
export interface Versioned<T> {
  value: T;
  version: string;
}

/** The fields a create fixes once; an update never changes them. */
export interface CreateFields {
  userId: string | null;
  agentId: string | null;
  endUserId: string | null;
  providerId: string | null;
  tenantId: string | null;
  oauthClientId: string | null;
  toolName: string;
  arguments: unknown;
  createdAt: string;
}

/** Everything a batch knows about one audit id: what to upsert, and which jobs it came from. */
export interface RowPatch {
  id: string;
  create?: CreateFields;
  status?: Versioned<AuditStatus>;
  result?: Versioned<unknown>;
  duration?: Versioned<number | null>;
  confirmedBy?: Versioned<string | null>;
  /** How a held call's confirmation was answered: carrier and OAuth client, one field. */
  decidedVia?: Versioned<{ carrier: ConfirmationCarrier; clientId: string | null }>;
  error?: Versioned<string | null>;
  keys: string[];
}

/** A job that passed validation, with its dedupe key (its own `key`). */
export interface ValidJob {
  job: AuditRecordJob;
  key: string;
}

/**
 * Parses one queued record with the job catalog's schema; anything else is a poison job
 * (failed with the reason, never retried into a crash loop). Producers are trusted code, but a
 * job may come from a buggy one.
 */
export function validateJob(raw: unknown): { ok: true; value: ValidJob } | { ok: false; reason: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, reason: 'invalid audit job: not an object' };
  const parsed = auditRecordJobSchema.safeParse(raw);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    return { ok: false, reason: `invalid audit job: ${issue?.path.join('.')}: ${issue?.message}` };
  }
  return { ok: true, value: { job: parsed.data, key: parsed.data.key } };
}

/** Sortable as text: time (ms, fixed width), then the producer's counter, then the key. */
function versionOf({ job, key }: ValidJob): string {
  const ms = String(Date.parse(job.at)).padStart(15, '0');
  return `${ms}.${String(job.seq).padStart(16, '0')}.${key}`;
}

const newer = <T>(current: Versioned<T> | undefined, candidate: Versioned<T>): Versioned<T> =>
  current === undefined || candidate.version > current.version ? candidate : current;

/**
 * Folds a batch's jobs into one patch per audit id with the writer's merge rule (last writer
 * wins per field, by version; status by stage first). The same rule runs in SQL against the
 * stored row, so the outcome does not depend on how jobs were split into batches or ordered.
 */
export function mergeJobs(jobs: readonly ValidJob[]): RowPatch[] {
  const byId = new Map<string, RowPatch>();
  for (const valid of jobs) {
    const { job, key } = valid;
    let patch = byId.get(job.id);
    if (!patch) {
      patch = { id: job.id, keys: [] };
      byId.set(job.id, patch);
    }
    patch.keys.push(key);
    const version = versionOf(valid);
    const fields = job.op === 'create' ? job : job.patch;
    if (job.op === 'create') {
      // Redeliveries of a create carry the same fields; keep the first.
      patch.create ??= {
        userId: job.userId,
        agentId: job.agentId,
        endUserId: job.endUserId,
        providerId: job.providerId,
        tenantId: job.tenantId,
        oauthClientId: job.oauthClientId ?? null,
        toolName: job.toolName,
        arguments: job.arguments ?? null,
        createdAt: job.at,
      };
    }
    if (fields.status !== undefined)
      patch.status = newer(patch.status, { value: fields.status, version: statusVersion(fields.status, version) });
    if (fields.error !== undefined) patch.error = newer(patch.error, { value: fields.error, version });
    // A create may carry its call's outcome (the producer took in an update that came before it left).
    if (fields.result !== undefined) patch.result = newer(patch.result, { value: fields.result, version });
    if (fields.duration !== undefined) patch.duration = newer(patch.duration, { value: fields.duration, version });
    if (job.op === 'update' && job.patch.confirmedBy !== undefined)
      patch.confirmedBy = newer(patch.confirmedBy, { value: job.patch.confirmedBy, version });
    if (job.op === 'update' && job.patch.decidedVia !== undefined)
      patch.decidedVia = newer(patch.decidedVia, { value: job.patch.decidedVia, version });
  }
  return [...byId.values()].sort(byAuditId);
}

/** Patches in id order (module-level, so its optimised code outlives a batch: see batch-writer.ts). */
const byAuditId = (a: RowPatch, b: RowPatch): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A status's version sorts by stage before time. */
function statusVersion(status: AuditStatus, version: string): string {
  return `${STAGE[status]}.${version}`;
}
