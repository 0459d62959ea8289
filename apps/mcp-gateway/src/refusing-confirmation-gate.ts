import type { AuditTrail } from '@agentgw/audit';
import type { ConfirmationGate, Logger } from '@agentgw/core';

/** Until the confirmation hub is wired in, a call that needs a human is refused with this reason. */
export const NO_CONFIRMATION_HUB = 'confirmation hub unavailable';

/**
 * The gate used when none is given: every hold is refused, no token redeems. Like the hub's gate
 * for the holds it ends, it owns the held call's outcome and writes it once (rejected, with the
 * reason): nothing else writes a held call's outcome, so without it the record stays pending.
 */
export function refusingConfirmationGate(deps: { audit: AuditTrail; logger: Logger }): ConfirmationGate {
  return {
    async hold(call) {
      await deps.audit
        .update(call.auditId, { status: 'rejected', error: NO_CONFIRMATION_HUB })
        .catch((err: unknown) =>
          deps.logger.error(
            { err, auditId: call.auditId },
            'audit of a hold refused without a confirmation hub failed',
          ),
        );
      return { decision: 'rejected', confirmationId: '', reason: NO_CONFIRMATION_HUB };
    },
    redeem: async () => false,
  };
}
