import type { ProviderRecord } from '@agentgw/catalog';
import type { UpstreamSession, UpstreamTarget } from '@agentgw/mcp-client';
import type { Context } from 'hono';
import type { EvictedSession } from '../session-store.js';
import { upstreamTarget } from '../upstream-targets.js';
import { listsPerUser } from '../user-lists/list-auth.js';
import { endpointOf } from './endpoint.js';
import { replyResponse, SESSION_HEADER } from './replies.js';
import { resolveSession, type SessionLookup } from './session-resolution.js';
import type { McpTransportDeps } from './transport-deps.js';

type CloseDeps = Pick<McpTransportDeps, 'catalog' | 'client'>;

/** How a per-user provider's upstream session is ended as the user ending the session: the target of their DELETE (refused: they cannot be sent as). */
export type AsUser = (provider: ProviderRecord) => Promise<UpstreamTarget>;

/** DELETE: ends the session, its server stream (on whichever replica holds it) and the upstream sessions it opened (as the caller). */
export async function endSession(deps: CloseDeps & SessionLookup & Pick<McpTransportDeps, 'sessions' | 'bus' | 'targets'>, c: Context): Promise<Response> {
  const principal = c.get('principal');
  const resolved = await resolveSession(deps, principal, endpointOf(c), c.req.header(SESSION_HEADER) ?? null);
  if (!resolved.ok) return replyResponse(resolved.reply);
  const { sid, protocolVersion } = resolved.session.claims;
  const upstreams = await deps.sessions.end(sid);
  await deps.bus.publish('mcp_session.ended', { sid });
  // The DELETE's caller is the session's (resolveSession checked it); a token_exchange provider exchanges this request's bearer.
  const request = { principal, requestId: c.get('requestId') ?? 'req_unknown', clientVersion: protocolVersion, headers: c.req.raw.headers, capabilities: {} };
  await closeUpstreams(deps, upstreams ?? {}, (provider) => deps.targets.forRequest(provider, request));
  return new Response(null, { status: 204 });
}

/**
 * A session dropped by the store (evicted past its caller's cap, or the in-process store's total):
 * its server stream ends, its upstream sessions close (behind the caller's answer; never throws).
 * The store does not say whose it was, so a per-user provider's session is left to expire upstream.
 */
export function dropEvicted(deps: CloseDeps & Pick<McpTransportDeps, 'bus'>, evicted: readonly EvictedSession[]): void {
  for (const old of evicted) {
    void deps.bus.publish('mcp_session.ended', { sid: old.sid }).catch(() => undefined);
    void closeUpstreams(deps, old.upstreams, null);
  }
}

/**
 * Ends a gateway session's upstream sessions (DELETE to each provider; never throws). A per-user
 * provider's is ended `asUser`, with the user's own auth (RequestTargets, as any forwarded request);
 * without it (null, or refused: disconnected, no user) it is left to expire upstream, since a
 * per-user provider is never sent a request without the user's auth. Others go with the
 * provider's own auth.
 */
export async function closeUpstreams(deps: CloseDeps, upstreams: Record<string, UpstreamSession>, asUser: AsUser | null): Promise<void> {
  await Promise.all(
    Object.entries(upstreams).map(async ([providerId, upstream]) => {
      const target = await closeTarget(deps, providerId, asUser).catch(() => null);
      if (target !== null) await deps.client.close(target, upstream);
    }),
  );
}

/** Where an upstream session's DELETE goes; null: nowhere (the provider is gone, or it is per-user and there is no user to send it as). */
async function closeTarget(deps: CloseDeps, providerId: string, asUser: AsUser | null): Promise<UpstreamTarget | null> {
  const provider = await deps.catalog.providers.get(providerId);
  if (!provider) return null;
  if (listsPerUser(provider)) return asUser === null ? null : asUser(provider);
  let secret: string | null;
  try {
    secret = deps.catalog.providers.authSecret(provider);
  } catch {
    secret = null;
  }
  return upstreamTarget(provider, secret, null);
}
