import { newId, type AuditRecordJob, type Clock, type JobQueue } from '@agentgw/core';
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

/** The producer side of the audit log, used by every service that records tool calls. */
export interface AuditTrail {
  /** Enqueues the creation of an audit record; returns its id, which exists before the job is written. */
  open(entry: AuditOpenEntry): Promise<string>;
  /** Enqueues an update (result, status, duration, confirmedBy, error); safe when it overtakes its insert. */
  update(id: string, patch: AuditPatch): Promise<void>;
}

/** Attempts before an audit job is given up (and kept in BullMQ's failed set). */
const ATTEMPTS = 10;

/** A group is sent once it holds this many records or this much JSON, whichever comes first. */
export const MAX_GROUP_RECORDS = 500;
export const MAX_GROUP_BYTES = 1024 * 1024;

interface Waiting {
  record: AuditRecordJob;
  resolve: () => void;
  reject: (err: unknown) => void;
}

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

  /** Sends the group; unless it is full, not while another group is on its way (it follows that one). */
  const flush = (full = false) => {
    scheduled = false;
    if (group.length === 0 || (sendingNow > 0 && !full)) return;
    const sending = group;
    group = [];
    groupBytes = 0;
    sendingNow++;
    deps.queue
      .enqueue('audit-bulk', { records: sending.map((w) => w.record) }, { attempts: ATTEMPTS, keepFailed: true })
      .then(
        () => sending.forEach((w) => w.resolve()),
        (err: unknown) => sending.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        sendingNow--;
        flush();
      });
  };

  const enqueue = (record: AuditRecordJob, bodyBytes: number) =>
    new Promise<void>((resolve, reject) => {
      const bytes = bodyBytes + envelopeBytes(record);
      if (group.length > 0 && groupBytes + bytes > MAX_GROUP_BYTES) flush(true);
      group.push({ record, resolve, reject });
      groupBytes += bytes;
      if (group.length >= MAX_GROUP_RECORDS) flush(true);
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });

  return {
    async open(entry) {
      const id = entry.id ?? newId();
      const args = maskBodySized(entry.arguments);
      await enqueue(
        {
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
        },
        args.maxBytes,
      );
      return id;
    },

    async update(id, patch) {
      const { result, error, ...rest } = patch;
      const masked = result === undefined ? undefined : maskBodySized(result);
      await enqueue(
        {
          op: 'update',
          id,
          key: `u:${newId()}`,
          seq: ++seq,
          at: deps.clock.now().toISOString(),
          patch: {
            ...rest,
            ...(masked && { result: masked.body }),
            ...(error !== undefined && { error: capError(error) }),
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
