import { newTimeOrderedId, type AuditRecordJob, type Clock, type JobQueue } from '@agentgw/core';
import { capError, maskBodySized } from './masking.js';

type CreateJob = Extract<AuditRecordJob, { op: 'create' }>;

/** What is known about a tool call when it is first recorded (the create job's fields, before masking). */
export type AuditOpenEntry = Pick<
  CreateJob,
  | 'userId'
  | 'agentId'
  | 'endUserId'
  | 'providerId'
  | 'tenantId'
  | 'oauthClientId'
  | 'toolName'
  | 'arguments'
  | 'status'
  | 'error'
> & {
  /** Given when the caller already announced the id (e.g. in a confirmation); otherwise one is made. */
  id?: string;
};

/** What later becomes known about it: the outcome, the confirmer, the duration (the update job's patch, before masking). */
export type AuditPatch = Extract<AuditRecordJob, { op: 'update' }>['patch'];

/**
 * When a create leaves: `now` (with the next group), or `with-outcome` — a forwarded call whose
 * outcome follows in moments: the create waits for the record's next update (at most
 * OUTCOME_WAIT_MS) and both travel as one record, so a quick call is one row and one chain link.
 */
export type OpenTiming = 'now' | 'with-outcome';

/** The producer side of the audit log, used by every service that records tool calls. */
export interface AuditTrail {
  /** Enqueues the creation of an audit record; returns its id, which exists before the job is written. */
  open(entry: AuditOpenEntry, timing?: OpenTiming): Promise<string>;
  /** Enqueues an update (result, status, duration, confirmedBy, error); safe when it overtakes its insert. */
  update(id: string, patch: AuditPatch): Promise<void>;
}

/** Attempts before an audit job is given up (and kept in BullMQ's failed set). */
const ATTEMPTS = 10;

/** A group is sent once it holds this many records or this much JSON, whichever comes first. */
export const MAX_GROUP_RECORDS = 500;
export const MAX_GROUP_BYTES = 1024 * 1024;

/** How long a `with-outcome` create waits for its outcome before it leaves alone (a slow or held call). */
export const OUTCOME_WAIT_MS = 50;

interface Waiting {
  record: AuditRecordJob;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** A `with-outcome` create not yet in a group: its promise's settlers, its body size, its timer. */
interface Parked extends Waiting {
  record: CreateJob;
  bodyBytes: number;
  timer: NodeJS.Timeout;
  /** Settles with the job that carries it (and, taken in, its outcome). */
  landed: Promise<void>;
}

/** The fields of an update a parked create can take in, so the pair becomes one create. */
const MERGEABLE: ReadonlySet<string> = new Set(['status', 'result', 'duration', 'error']);

/**
 * Builds the trail over the shared job queue; masking and caps happen here, before enqueueing.
 * Records issued in the same event-loop turn (concurrent tool calls) travel as one
 * `audit-bulk` job, and while one job is on its way to the queue the next group keeps filling
 * (it leaves as soon as that one lands, or when full): under load each job carries many calls'
 * records instead of a few, at most one queue round trip later. Each call resolves once the
 * job holding its record is in the queue.
 */
export function createAuditTrail(deps: { queue: JobQueue; clock: Clock }): AuditTrail {
  // Orders two updates stamped in the same millisecond by this process.
  let seq = 0;
  let group: Waiting[] = [];
  let groupBytes = 0;
  let scheduled = false;
  let sendingNow = 0;
  const parked = new Map<string, Parked>();

  /** Sends the group; unless it is full, not while another group is on its way (it follows that one). */
  const flush = (full = false) => {
    scheduled = false;
    if (group.length === 0 || (sendingNow > 0 && !full)) return;
    const sending = group;
    // The records are fresh, JSON-safe copies nothing touches again, and groupBytes bounds their
    // JSON: the in-process queue keeps them as they are instead of a JSON copy.
    const handOver = { chars: groupBytes };
    group = [];
    groupBytes = 0;
    sendingNow++;
    deps.queue
      .enqueue(
        'audit-bulk',
        { records: sending.map((w) => w.record) },
        { attempts: ATTEMPTS, keepFailed: true, handOver },
      )
      .then(
        () => sending.forEach((w) => w.resolve()),
        (err: unknown) => sending.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        sendingNow--;
        flush();
      });
  };

  /** Puts a record in the group; its promise settles once the group's job is in the queue. */
  const join = (waiting: Waiting, bodyBytes: number) => {
    const bytes = bodyBytes + envelopeBytes(waiting.record);
    if (group.length > 0 && groupBytes + bytes > MAX_GROUP_BYTES) flush(true);
    group.push(waiting);
    groupBytes += bytes;
    if (group.length >= MAX_GROUP_RECORDS) flush(true);
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  const enqueue = (record: AuditRecordJob, bodyBytes: number) =>
    new Promise<void>((resolve, reject) => join({ record, resolve, reject }, bodyBytes));

  /** A parked create that waited long enough (or meets an update it cannot take in) leaves alone. */
  const unpark = (id: string): void => {
    const waiting = parked.get(id);
    if (!waiting) return;
    parked.delete(id);
    clearTimeout(waiting.timer);
    join(waiting, waiting.bodyBytes);
  };

  const park = (record: CreateJob, bodyBytes: number): Promise<void> => {
    let settle!: Pick<Waiting, 'resolve' | 'reject'>;
    const landed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    const timer = setTimeout(() => unpark(record.id), OUTCOME_WAIT_MS);
    parked.set(record.id, { record, ...settle, bodyBytes, timer, landed });
    return landed;
  };

  /**
   * The outcome of a parked create, taken into it: one record, one row, one chain link. The
   * record is changed in place: nothing else holds it until it joins a group.
   */
  const takeIn = (waiting: Parked, patch: AuditPatch): boolean => {
    for (const field in patch) if (!MERGEABLE.has(field)) return false;
    const { result, error, status, duration } = patch;
    const { record } = waiting;
    record.seq = ++seq;
    if (status !== undefined) record.status = status;
    if (result !== undefined) {
      const masked = maskBodySized(result);
      record.result = masked.body;
      waiting.bodyBytes += masked.maxBytes;
    }
    if (duration !== undefined) record.duration = duration;
    if (error !== undefined) record.error = capError(error);
    return true;
  };

  return {
    async open(entry, timing = 'now') {
      const id = entry.id ?? newTimeOrderedId();
      const args = maskBodySized(entry.arguments);
      const record: CreateJob = {
        op: 'create',
        id,
        key: `c:${id}`,
        seq: ++seq,
        at: deps.clock.now().toISOString(),
        userId: entry.userId,
        agentId: entry.agentId,
        endUserId: entry.endUserId,
        providerId: entry.providerId,
        tenantId: entry.tenantId,
        ...(entry.oauthClientId != null && { oauthClientId: entry.oauthClientId }),
        toolName: entry.toolName,
        arguments: args.body,
        status: entry.status,
        ...(entry.error !== undefined && { error: capError(entry.error) }),
      };
      await (timing === 'with-outcome' && !parked.has(id)
        ? park(record, args.maxBytes)
        : enqueue(record, args.maxBytes));
      return id;
    },

    async update(id, patch) {
      const waiting = parked.get(id);
      if (waiting && takeIn(waiting, patch)) {
        unpark(id);
        return waiting.landed;
      }
      unpark(id);
      const { result, error, decidedVia, ...rest } = patch;
      // The record is handed over to the queue, which must not share a part with the caller's
      // patch: the fields above are masked or copied, and the rest must stay scalars (a new object
      // field fails to compile here until it is copied too).
      const masked = result === undefined ? undefined : maskBodySized(result);
      await enqueue(
        {
          op: 'update',
          id,
          key: `u:${newTimeOrderedId()}`,
          seq: ++seq,
          at: deps.clock.now().toISOString(),
          patch: {
            ...(rest satisfies Readonly<Record<string, string | number | null | undefined>>),
            ...(masked && { result: masked.body }),
            ...(error !== undefined && { error: capError(error) }),
            ...(decidedVia !== undefined && {
              decidedVia: { carrier: decidedVia.carrier, clientId: decidedVia.clientId },
            }),
          },
        },
        masked?.maxBytes ?? 0,
      );
    },
  };
}

/** Room for a record's keys, punctuation, numbers and dates in its JSON. */
const ENVELOPE_BASE_BYTES = 384;

/**
 * An upper bound of a record's JSON size without its bodies, without serialising it again (the
 * queue does that once for the whole group): 3 bytes per character of its strings (UTF-8's
 * most; only a control character, which ids and names do not hold, escapes longer) plus room
 * for the rest.
 */
function envelopeBytes(r: AuditRecordJob): number {
  const fields =
    r.op === 'create'
      ? [r.userId, r.agentId, r.endUserId, r.providerId, r.tenantId, r.toolName, r.status, r.error]
      : [r.patch.status, r.patch.confirmedBy, r.patch.error];
  const chars = r.id.length + r.key.length + r.at.length + fields.reduce((sum, text) => sum + lengthOf(text), 0);
  return ENVELOPE_BASE_BYTES + chars * 3;
}

const lengthOf = (text: string | null | undefined): number => (typeof text === 'string' ? text.length : 0);
