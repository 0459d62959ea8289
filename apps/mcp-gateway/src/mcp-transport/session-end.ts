import type { UpstreamSession } from '@agentgw/mcp-client';
import type { Context } from 'hono';
import type { EvictedSession } from '../session-store.js';
import { upstreamTarget } from '../upstream-targets.js';
import { listsPerUser } from '../user-lists/list-auth.js';
import { endpointOf } from './endpoint.js';
import { replyResponse, SESSION_HEADER } from './replies.js';
import { resolveSession, type SessionLookup } from './session-resolution.js';
import type { McpTransportDeps } from './transport-deps.js';

type CloseDeps = Pick<McpTransportDeps, 'catalog' | 'client'>;

/** DELETE: ends the session, its server stream (on whichever replica holds it) and the upstream sessions it opened. */
export async function endSession(deps: CloseDeps & SessionLookup & Pick<McpTransportDeps, 'sessions' | 'bus'>, c: Context): Promise<Response> {
  const resolved = await resolveSession(deps, c.get('principal'), endpointOf(c), c.req.header(SESSION_HEADER) ?? null);
  if (!resolved.ok) return replyResponse(resolved.reply);
  const { sid } = resolved.session.claims;
  const upstreams = await deps.sessions.end(sid);
  await deps.bus.publish('mcp_session.ended', { sid });
  await closeUpstreams(deps, upstreams ?? {});
  return new Response(null, { status: 204 });
}

/** A session dropped by the store (evicted past its caller's cap): its server stream ends, its upstream sessions close (behind the caller's answer; never throws). */
export function dropEvicted(deps: CloseDeps & Pick<McpTransportDeps, 'bus'>, evicted: readonly EvictedSession[]): void {
  for (const old of evicted) {
    void deps.bus.publish('mcp_session.ended', { sid: old.sid }).catch(() => undefined);
    void closeUpstreams(deps, old.upstreams);
  }
}

/**
 * Ends a gateway session's upstream sessions (DELETE to each provider; never throws). A per-user
 * provider's session is left to expire upstream: its DELETE would go without the user's token,
 * and a per-user provider is never sent a request without it.
 */
export async function closeUpstreams(deps: CloseDeps, upstreams: Record<string, UpstreamSession>): Promise<void> {
  await Promise.all(
    Object.entries(upstreams).map(async ([providerId, upstream]) => {
      const provider = await deps.catalog.providers.get(providerId).catch(() => null);
      if (!provider || listsPerUser(provider)) return;
      let secret: string | null;
      try {
        secret = deps.catalog.providers.authSecret(provider);
      } catch {
        secret = null;
      }
      await deps.client.close(upstreamTarget(provider, secret, null), upstream);
    }),
  );
}
