import { createHash } from 'node:crypto';
import type { AuditRecordJob, AuditStatus } from '@agentgw/core';

/**
 * Status stages: a later stage wins over an earlier one whatever the order jobs arrive in.
 * `rejected` (denied, or a human said no) is final: a tool-gate caller completing its own
 * refused call later cannot turn the record into `completed`.
 */
const STAGE: Record<AuditStatus, number> = { pending: 0, confirmed: 1, completed: 2, failed: 2, rejected: 3 };

const STATUSES = new Set<string>(Object.keys(STAGE));
/** ISO 8601 date-time with Z or an offset, as producers stamp `at`. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const MAX_ID = 200;

type Check = (value: unknown) => string | undefined;
const optional = (check: Check): Check => (v) => (v === undefined ? undefined : check(v));
const nullable = (check: Check): Check => (v) => (v === null || v === undefined ? undefined : check(v));
const text = (min: number, max: number): Check => (v) =>
  typeof v !== 'string' ? 'must be a string' : v.length < min || v.length > max ? `must be ${min}-${max} characters` : undefined;
const int = (max: number): Check => (v) =>
  typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max ? `must be an integer from 0 to ${max}` : undefined;

/**
 * What a queued audit job must look like to be written; anything else is a poison job (failed
 * with the reason, never retried into a crash loop). Producers are trusted code, but a job may
 * come from an older or buggy one. Hand-written rather than zod: it runs for every record on
 * the write path.
 */
const FIELDS: [keyof AuditRecordJob, Check][] = [
  ['op', (v) => (v === 'create' || v === 'update' ? undefined : 'must be create or update')],
  ['id', text(1, MAX_ID)],
  ['key', optional(text(1, 300))],
  ['seq', optional(int(Number.MAX_SAFE_INTEGER))],
  ['at', (v) => (typeof v === 'string' && ISO_DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)) ? undefined : 'must be an ISO date-time')],
  ['userId', nullable(text(1, MAX_ID))],
  ['agentId', nullable(text(1, MAX_ID))],
  ['endUserId', nullable(text(1, MAX_ID))],
  ['providerId', nullable(text(1, MAX_ID))],
  ['tenantId', nullable(text(1, MAX_ID))],
  ['toolName', optional(text(1, 512))],
  ['status', optional((v) => (typeof v === 'string' && STATUSES.has(v) ? undefined : 'must be a known status'))],
  ['duration', nullable(int(2_147_483_647))],
  ['confirmedBy', nullable(text(1, MAX_ID))],
  ['error', nullable(text(0, 10_000))],
];

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
  error?: Versioned<string | null>;
  keys: string[];
}

/** A job that passed validation, with its dedupe key. */
export interface ValidJob {
  job: AuditRecordJob;
  key: string;
}

/** Validates one job; returns the reason when it cannot be written. */
export function validateJob(raw: unknown): { ok: true; value: ValidJob } | { ok: false; reason: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'invalid audit job: not an object' };
  const job = raw as AuditRecordJob;
  for (const [field, check] of FIELDS) {
    const problem = check(job[field]);
    if (problem) return { ok: false, reason: `invalid audit job: ${field}: ${problem}` };
  }
  if (job.op === 'create' && (job.toolName === undefined || job.status === undefined)) {
    return { ok: false, reason: 'invalid audit job: a create needs toolName and status' };
  }
  return { ok: true, value: { job, key: job.key ?? derivedKey(job) } };
}

/** For producers that send no key: a create is unique per id, an update per content. */
function derivedKey(job: AuditRecordJob): string {
  if (job.op === 'create') return `c:${job.id}`;
  return `u:${job.id}:${createHash('sha256').update(JSON.stringify(job)).digest('hex').slice(0, 32)}`;
}

/** Sortable as text: time (ms, fixed width), then the producer's counter, then the key. */
function versionOf({ job, key }: ValidJob): string {
  const ms = String(Date.parse(job.at)).padStart(15, '0');
  return `${ms}.${String(job.seq ?? 0).padStart(16, '0')}.${key}`;
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
    if (job.op === 'create' && job.toolName !== undefined) {
      // Redeliveries of a create carry the same fields; keep the first.
      patch.create ??= {
        userId: job.userId ?? null,
        agentId: job.agentId ?? null,
        endUserId: job.endUserId ?? null,
        providerId: job.providerId ?? null,
        tenantId: job.tenantId ?? null,
        toolName: job.toolName,
        arguments: job.arguments ?? null,
        createdAt: job.at,
      };
    }
    if (job.status !== undefined) patch.status = newer(patch.status, { value: job.status, version: statusVersion(job.status, version) });
    if (job.result !== undefined) patch.result = newer(patch.result, { value: job.result, version });
    if (job.duration !== undefined) patch.duration = newer(patch.duration, { value: job.duration, version });
    if (job.confirmedBy !== undefined) patch.confirmedBy = newer(patch.confirmedBy, { value: job.confirmedBy, version });
    if (job.error !== undefined) patch.error = newer(patch.error, { value: job.error, version });
  }
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A status's version sorts by stage before time. */
function statusVersion(status: AuditStatus, version: string): string {
  return `${STAGE[status]}.${version}`;
}
