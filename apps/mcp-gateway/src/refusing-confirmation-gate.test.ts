import type { HeldCall } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { NO_CONFIRMATION_HUB, refusingConfirmationGate } from './refusing-confirmation-gate.js';
import { recordingTrail, spyLogger } from './tool-call/tool-call.fixtures.js';

const call: HeldCall = {
  auditId: 'audit-1',
  agentId: 'a1',
  userId: 'u1',
  endUserId: 'u1',
  tenantId: 't1',
  providerId: 'ops',
  toolName: 'ops_drop',
  arguments: {},
  risk: 'high',
};
const options = { signal: new AbortController().signal };

describe('refusingConfirmationGate (no confirmation hub)', () => {
  it('refuses every hold and ends its record rejected with the reason, written once', async () => {
    const audit = recordingTrail();
    const gate = refusingConfirmationGate({ audit, logger: spyLogger() });
    expect(await gate.hold(call, options)).toEqual({
      decision: 'rejected',
      confirmationId: '',
      reason: NO_CONFIRMATION_HUB,
    });
    expect(audit.jobs).toEqual([{ op: 'update', id: 'audit-1', status: 'rejected', error: NO_CONFIRMATION_HUB }]);
  });

  it('still refuses the call when the record cannot be written, and logs it', async () => {
    const audit = recordingTrail();
    audit.failing = true;
    const logger = spyLogger();
    expect(await refusingConfirmationGate({ audit, logger }).hold(call, options)).toMatchObject({
      decision: 'rejected',
      reason: NO_CONFIRMATION_HUB,
    });
    expect(logger.error).toHaveBeenCalledTimes(1);
  });

  it('redeems no token', async () => {
    expect(await refusingConfirmationGate({ audit: recordingTrail(), logger: spyLogger() }).redeem('any', call)).toBe(
      false,
    );
  });
});
