import type { ClientAnswerOutcome, HeldCall, RoundOutcome } from '@agentgw/core';
import { callHash } from './call-hash.js';
import { findConfirmation } from './confirmation-records.js';
import {
  APPROVAL_SPENT_REASON,
  cancelConfirmation,
  holdOutcomeOf,
  resolutionOf,
  spendApproval,
  timeOutConfirmation,
  type ConfirmationDeps,
} from './decisions.js';

/**
 * Where a round's confirmation stands when its client retries (any replica, one read): refused
 * unless it is for exactly this call (the args hash binds agent, end user, provider, tool and
 * arguments); pending until decided (past its deadline it is timed out here, as the deadline job
 * would); a confirmed one releases the call only by spending its approval, so a replayed retry,
 * or two racing, run it once. Nothing here writes the call's audit record: the decision did, and
 * the retry that runs it finishes it (a replay must not overwrite the record of the call that ran).
 */
export async function settleRound(deps: ConfirmationDeps, id: string, call: HeldCall): Promise<RoundOutcome> {
  const row = await findConfirmation(deps.db, id);
  if (!row || row.call_hash !== callHash(call)) return { decision: 'refused', confirmationId: id };
  let ended = row;
  if (row.status === 'pending') {
    if (row.expires_at > deps.clock.now())
      return { decision: 'pending', confirmationId: id, expiresAt: row.expires_at };
    ended = (await timeOutConfirmation(deps, id)) ?? (await findConfirmation(deps.db, id)) ?? row;
    if (ended.status === 'pending') return { decision: 'pending', confirmationId: id, expiresAt: row.expires_at };
  }
  if (ended.status === 'consumed') return spent(id);
  const outcome = holdOutcomeOf(id, resolutionOf(ended));
  if (outcome.decision === 'confirmed' && !(await spendApproval(deps, id))) return spent(id);
  return outcome;
}

const spent = (confirmationId: string): RoundOutcome => ({
  decision: 'rejected',
  confirmationId,
  reason: APPROVAL_SPENT_REASON,
});

/**
 * The caller withdraws a round's (or task's) confirmation: refused unless it is for exactly this
 * call; applied only while pending (first decision wins), after which the console cannot approve
 * it and the call's record ends rejected with the cancellation's reason.
 */
export async function cancelRound(deps: ConfirmationDeps, id: string, call: HeldCall): Promise<ClientAnswerOutcome> {
  const row = await findConfirmation(deps.db, id);
  if (!row || row.call_hash !== callHash(call)) return 'refused';
  return (await cancelConfirmation(deps, id)) ? 'applied' : 'already_decided';
}
