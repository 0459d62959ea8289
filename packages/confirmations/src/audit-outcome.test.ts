import type { AuditPatch, AuditTrail } from '@agentgw/audit';
import type { ConfirmationStatus } from '@agentgw/core';
import type { ConfirmationRow } from '@agentgw/db';
import { describe, expect, it } from 'vitest';
import { recordAuditOutcome } from './audit-outcome.js';
import { DEFAULT_REJECT_REASON, EXPIRED_REASON, TIMEOUT_REASON } from './decisions.js';

const at = new Date('2026-01-01T00:00:00Z');
const row = (status: ConfirmationStatus, over: Partial<ConfirmationRow> = {}): ConfirmationRow => ({
  id: 'c1',
  status,
  user_id: 'owner-1',
  end_user_id: 'alice',
  agent_id: 'agent-1',
  provider_id: 'github',
  tenant_id: 'acme',
  tool_name: 'delete_repo',
  arguments: {},
  risk_level: 'high',
  audit_id: 'audit-1',
  reason: null,
  decided_by: null,
  decided_at: at,
  expires_at: at,
  created_at: at,
  call_hash: null,
  decided_via: null,
  decided_client_id: null,
  ...over,
});

/** The patches recordAuditOutcome sends, exactly as sent (keys and all). */
async function patchesFor(confirmation: ConfirmationRow): Promise<(AuditPatch & { id: string })[]> {
  const sent: (AuditPatch & { id: string })[] = [];
  const trail: AuditTrail = {
    open: async () => 'unused',
    update: async (id, patch) => void sent.push({ id, ...patch }),
  };
  await recordAuditOutcome(trail, confirmation);
  return sent;
}

describe('recordAuditOutcome: a confirmation end writes only the fields it owns', () => {
  it('confirmed: the status and who confirmed, and no error field (it must not erase one)', async () => {
    const [patch, ...more] = await patchesFor(row('confirmed', { decided_by: 'alice', reason: 'looks fine' }));
    expect(more).toEqual([]);
    expect(Object.keys(patch!).sort()).toEqual(['confirmedBy', 'id', 'status']);
    expect(patch).toEqual({ id: 'audit-1', status: 'confirmed', confirmedBy: 'alice' });
  });

  it('rejected or timed out: the status and the reason, and no confirmedBy field', async () => {
    expect(await patchesFor(row('rejected', { decided_by: 'bob', reason: DEFAULT_REJECT_REASON }))).toStrictEqual([
      { id: 'audit-1', status: 'rejected', error: DEFAULT_REJECT_REASON },
    ]);
    expect(await patchesFor(row('rejected', { reason: TIMEOUT_REASON }))).toStrictEqual([
      { id: 'audit-1', status: 'rejected', error: TIMEOUT_REASON },
    ]);
  });

  it('expired: failed with the reason (the audit log has no expired)', async () => {
    expect(await patchesFor(row('expired', { reason: EXPIRED_REASON }))).toStrictEqual([
      { id: 'audit-1', status: 'failed', error: EXPIRED_REASON },
    ]);
  });

  it('names the carrier and the OAuth client that answered, confirming or rejecting (none for a timeout)', async () => {
    expect(
      await patchesFor(row('confirmed', { decided_by: 'alice', decided_via: 'client', decided_client_id: 'app-1' })),
    ).toStrictEqual([
      {
        id: 'audit-1',
        status: 'confirmed',
        confirmedBy: 'alice',
        decidedVia: { carrier: 'client', clientId: 'app-1' },
      },
    ]);
    expect(
      await patchesFor(row('rejected', { decided_by: 'bob', reason: DEFAULT_REJECT_REASON, decided_via: 'console' })),
    ).toStrictEqual([
      {
        id: 'audit-1',
        status: 'rejected',
        error: DEFAULT_REJECT_REASON,
        decidedVia: { carrier: 'console', clientId: null },
      },
    ]);
  });

  it('writes nothing for a row that has not ended, was spent already, or has no record', async () => {
    expect(await patchesFor(row('pending'))).toEqual([]);
    expect(await patchesFor(row('consumed', { decided_by: 'alice' }))).toEqual([]);
    expect(await patchesFor(row('confirmed', { decided_by: 'alice', audit_id: null }))).toEqual([]);
  });
});
