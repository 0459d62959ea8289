import type { Principal } from '@agentgw/auth';
import { JSON_RPC } from '@agentgw/mcp-client';
import type { McpEndpoint, McpRequestContext } from '../mcp-context.js';
import { GATEWAY_RPC } from '../rpc-errors.js';
import { sessionBelongsTo, type SessionIdCodec } from '../session-ids.js';
import type { SessionStore } from '../session-store.js';
import { scopeOf } from './endpoint.js';
import { refusal, type Reply } from './replies.js';

/** A legacy session a request names, with the upstream sessions opened in it so far. */
export type Session = NonNullable<McpRequestContext['session']>;

/** What finding a session reads: the id codec and the store. */
export interface SessionLookup {
  codec: Pick<SessionIdCodec, 'open'>;
  sessions: Pick<SessionStore, 'get'>;
}

/** The session found, or the answer explaining why the request cannot continue. */
export type SessionResolution = { ok: true; session: Session } | { ok: false; reply: Reply };

const MISSING: SessionResolution = {
  ok: false,
  reply: refusal(400, JSON_RPC.INVALID_REQUEST, 'Bad Request: Mcp-Session-Id header is required'),
};
const NOT_FOUND: SessionResolution = {
  ok: false,
  reply: refusal(404, GATEWAY_RPC.SESSION_NOT_FOUND, 'Session not found'),
};

/**
 * The session `id` (the `Mcp-Session-Id` header) names. Another caller's session, one opened on
 * another endpoint, a forged or ended one all read as 404 alike, so ids cannot be probed.
 */
export async function resolveSession(
  deps: SessionLookup,
  principal: Principal,
  endpoint: McpEndpoint,
  id: string | null,
): Promise<SessionResolution> {
  if (id === null) return MISSING;
  const claims = deps.codec.open(id);
  if (!claims || claims.scope !== scopeOf(endpoint) || !sessionBelongsTo(claims, principal)) return NOT_FOUND;
  const upstreams = await deps.sessions.get(claims.sid);
  if (upstreams === null) return NOT_FOUND;
  return { ok: true, session: { claims, upstreams } };
}
