import type { ClientAnswer, ClientAnswerOutcome, HeldCall } from '@agentgw/core';
import { callHash } from './call-hash.js';
import { findConfirmation } from './confirmation-records.js';
import { decideConfirmation, type ConfirmationDeps } from './decisions.js';

/**
 * A person's answer from their own MCP client (the `client` carrier), decided like a console
 * answer: the first decision on any carrier and replica wins. Refused unless the confirmation is
 * for exactly this call (its args hash) and the answering person is the one it acts for, with no
 * agent between (an agent never approves its own call). Recorded with the carrier and the OAuth
 * client that answered.
 */
export async function answerFromClient(
  deps: ConfirmationDeps,
  id: string,
  call: HeldCall,
  answer: ClientAnswer,
): Promise<ClientAnswerOutcome> {
  const row = await findConfirmation(deps.db, id);
  if (!row || row.call_hash !== callHash(call)) return 'refused';
  if (row.agent_id !== null || row.end_user_id !== answer.userId) return 'refused';
  const result = await decideConfirmation(deps, id, {
    confirmed: answer.confirmed,
    decidedBy: answer.userId,
    via: 'client',
    clientId: answer.clientId,
  });
  return result.applied ? 'applied' : 'already_decided';
}
