import { createAuditTrail, type AuditOpenEntry, type AuditPatch, type AuditTrail } from '@agentgw/audit';
import type { TestDeps } from '@agentgw/service-kit/testing';

/** What the gateway asked an audit trail to write: an opened entry or a patch of one, under the entry's id. */
export interface RecordedAudit {
  id: string;
  entry?: AuditOpenEntry;
  patch?: AuditPatch;
}

/**
 * An audit trail that only records into `audits`, for tests reading what the gateway audited
 * without a queue behind it; `onRecord` sees each write as it lands (a test awaiting one does not poll).
 */
export function recordingAuditTrail(
  audits: RecordedAudit[],
  onRecord: (audit: RecordedAudit) => void = () => {},
): AuditTrail {
  const record = (audit: RecordedAudit) => {
    audits.push(audit);
    onRecord(audit);
  };
  return {
    async open(entry) {
      record({ id: entry.id ?? '', entry });
      return entry.id ?? '';
    },
    async update(id, patch) {
      record({ id, patch });
    },
  };
}

/** One write to the real trail as `recordingRealAuditTrail` saw it: the created entry or the update, with its id. */
export type RecordedAuditWrite =
  ({ op: 'create'; id: string } & AuditOpenEntry) | ({ op: 'update'; id: string } & AuditPatch);

/** The real audit trail (enqueued as in production) that also records each write into `writes`, for tests asserting on both. */
export function recordingRealAuditTrail(writes: RecordedAuditWrite[]): (deps: TestDeps) => AuditTrail {
  return (deps) => {
    const real = createAuditTrail({ queue: deps.queue, clock: deps.clock });
    return {
      async open(entry) {
        const id = await real.open(entry);
        writes.push({ op: 'create', ...entry, id });
        return id;
      },
      async update(id, patch) {
        writes.push({ op: 'update', ...patch, id });
        await real.update(id, patch);
      },
    };
  };
}
