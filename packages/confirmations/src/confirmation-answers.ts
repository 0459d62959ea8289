import { isPersonSignedIn, type AuthService, type Principal } from '@agentgw/auth';
import { AppError, ForbiddenError, NotFoundError } from '@agentgw/core';
import type { ConfirmationRow, Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { findConfirmation, toConfirmation, toPayload, type Confirmation } from './confirmation-records.js';
import { agentIsActive, decideConfirmation, rejectForInactiveAgent, type ConfirmationDeps } from './decisions.js';
import { canSeeConfirmation } from './visibility.js';

/** A confirmation the principal may not see is answered exactly like one that does not exist. */
const notFound = () => new NotFoundError('Confirmation', 'CONFIRMATION_NOT_FOUND');

async function visibleRow(db: Kysely<Database>, principal: Principal, id: string): Promise<ConfirmationRow> {
  const row = await findConfirmation(db, id);
  if (!row || !canSeeConfirmation(principal, toPayload(row))) throw notFound();
  return row;
}

/** GET by id: the confirmation, or 404 CONFIRMATION_NOT_FOUND for an unknown or foreign one. */
export async function getVisibleConfirmation(
  db: Kysely<Database>,
  principal: Principal,
  id: string,
): Promise<Confirmation> {
  return toConfirmation(await visibleRow(db, principal, id));
}

export interface AnswerResult {
  confirmation: Confirmation;
  /**
   * Exact-call approval, on a confirming answer whose held caller went away only: a call still
   * held is released by the answer itself, and one approval runs one call.
   */
  confirmationToken?: { token: string; expiresIn: number };
}

/**
 * A confirmer's answer. 404 when the principal may not see it; 403 when an agent is the one
 * acting (a human must decide, so an agent's credential never answers, even with a user named),
 * and 403 AGENT_DISABLED when the agent that made the call is disabled or deleted;
 * 409 CONFIRMATION_ALREADY_DECIDED once it is no longer pending (the first decision stands).
 */
export async function answerConfirmation(
  deps: ConfirmationDeps & { auth: Pick<AuthService, 'signConfirmationToken'> },
  principal: Principal,
  id: string,
  answer: { confirmed: boolean; reason?: string | null },
): Promise<AnswerResult> {
  const row = await visibleRow(deps.db, principal, id);
  // A person signed in decides: an agent credential, a session token, or an API key (which the
  // runtime holding the call has, with X-User-Id naming that very user) would approve its own call.
  if (!isPersonSignedIn(principal)) {
    throw new ForbiddenError(
      'Confirmations are answered by a person signed in, not by an agent credential or API key',
      'AGENT_CANNOT_CONFIRM',
    );
  }
  // Backstop of the kill switch (a replica that missed `agent.changed`): a disabled or deleted
  // agent's call is never approved; answering it ends it.
  if (row.status === 'pending' && row.agent_id !== null && !(await agentIsActive(deps.db, row.agent_id))) {
    await rejectForInactiveAgent(deps, id);
    throw new ForbiddenError('The agent that made this call is disabled; the call was rejected', 'AGENT_DISABLED');
  }
  const result = await decideConfirmation(deps, id, { ...answer, decidedBy: principal.userId, via: 'console' });
  if (!result.applied) {
    const status = result.row?.status;
    if (!status) throw notFound();
    throw new AppError(409, 'CONFIRMATION_ALREADY_DECIDED', `Confirmation is already ${status}`, { status });
  }
  const confirmation = toConfirmation(result.row);
  if (!answer.confirmed || result.waiting === 'held') return { confirmation };
  const confirmationToken = await deps.auth.signConfirmationToken({ confirmationId: id, userId: principal.userId });
  return { confirmation, confirmationToken };
}
