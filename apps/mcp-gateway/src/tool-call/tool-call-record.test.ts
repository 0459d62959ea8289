import { describe, expect, it } from 'vitest';
import { bareAgentOf, recordingTrail, spyLogger } from './tool-call.fixtures.js';
import { auditEntryOf, ToolCallRecord } from './tool-call-record.js';

const call = { principal: bareAgentOf(), auditId: 'audit-1', toolName: 'ops_read', arguments: { n: 1 } };

function recordWith() {
  const trail = recordingTrail();
  const logger = spyLogger();
  return { trail, error: logger.error, record: new ToolCallRecord({ audit: trail, logger }) };
}

describe('ToolCallRecord', () => {
  it('maps the caller to the record once: a bare runtime token is its agent, with no user or end user', () => {
    expect(auditEntryOf(call, 'ops', 'pending')).toEqual({
      id: 'audit-1',
      userId: null,
      agentId: 'a1',
      endUserId: null,
      tenantId: 't1',
      providerId: 'ops',
      toolName: 'ops_read',
      arguments: { n: 1 },
      status: 'pending',
    });
  });

  it('records the forwarded call’s outcome', async () => {
    const { trail, record } = recordWith();
    await record.finished('audit-1', { status: 'completed', result: { content: [] }, duration: 12 });
    expect(trail.jobs).toEqual([
      { op: 'update', id: 'audit-1', status: 'completed', result: { content: [] }, duration: 12 },
    ]);
  });

  it('a queue outage is logged, never turned into a failed call, on every write the call makes', async () => {
    const { trail, error, record } = recordWith();
    trail.failing = true;
    await expect(record.opened(call, 'ops')).resolves.toBeUndefined();
    await expect(record.refused(call, 'ops', 'no provider access')).resolves.toBeUndefined();
    await expect(record.refusedAfterRelease('audit-1', 'Agent is disabled')).resolves.toBeUndefined();
    await expect(record.redeemed('audit-1')).resolves.toBeUndefined();
    await expect(record.finished('audit-1', { status: 'failed', error: 'boom', duration: 1 })).resolves.toBeUndefined();
    expect(error).toHaveBeenCalledTimes(5);
  });

  it('what a runtime reports is written or fails its request: it asked for exactly this write', async () => {
    const { trail, record } = recordWith();
    await record.reportedUnevaluated({ ...call, arguments: null }, 'ops', {
      status: 'failed',
      error: 'boom',
      duration: null,
    });
    expect(trail.jobs).toEqual([
      { op: 'open', ...auditEntryOf({ ...call, arguments: null }, 'ops', 'failed') },
      { op: 'update', id: 'audit-1', status: 'failed', error: 'boom', duration: null },
    ]);
    trail.failing = true;
    await expect(record.reported('audit-1', { status: 'completed', duration: 3 })).rejects.toThrow('queue down');
  });
});
