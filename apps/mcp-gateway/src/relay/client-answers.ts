import { requestHeaders } from '@agentgw/core';
import type { Principal } from '@agentgw/auth';
import { JSON_RPC } from '@agentgw/mcp-client';
import type { Context } from 'hono';
import type { Incoming } from '../json-rpc-messages.js';
import type { ParsedPost } from '../mcp-transport/parse-and-negotiate.js';
import { refusal, type Reply } from '../mcp-transport/replies.js';
import type { Session } from '../mcp-transport/session-resolution.js';
import { clientOwner } from './relay-contract.js';
import type { ServerRequestRelay } from './server-request-relay.js';

type Answer = Extract<Incoming, { kind: 'response' }>;

/**
 * The responses of a POST (a client's answers to server requests the gateway relayed), each
 * routed back to the upstream that asked, from this replica. A POST that is a single answer to
 * nothing pending for this client (unknown, answered, expired, another client's) is refused (400,
 * as the transport says of input the server cannot accept); inside a batch such answers are dropped.
 * Null when there is nothing to refuse (and at once, without an await, when the POST holds no answer).
 */
export async function deliverAnswers(
  deps: { relay: Pick<ServerRequestRelay, 'deliver'> },
  c: Context,
  principal: Principal,
  session: Session | null,
  parsed: ParsedPost,
): Promise<Reply | null> {
  let answers: Answer[] | null = null;
  for (const item of parsed.items) if (item.kind === 'response') (answers ??= []).push(item);
  if (answers === null) return null;
  const owner = clientOwner(session?.claims.sid ?? null, principal);
  const requestId: string = c.get('requestId') ?? 'req_unknown';
  const unknown = await deps.relay.deliver(
    owner,
    { principal, requestId, headers: requestHeaders(c) },
    answers.map((a) => a.message),
  );
  if (unknown === 0 || parsed.batch) return null;
  return refusal(400, JSON_RPC.INVALID_REQUEST, 'Bad Request: the response answers no pending server request');
}
