import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import type { UpstreamSession, UpstreamTarget } from '@agentgw/mcp-client';
import type { Context } from 'hono';
import type { EvictedSession } from '../session-store.js';
import { sharedTargetOf } from '../provider-view/shared-view.js';
import { endpointOf } from './endpoint.js';
import { replyResponse, SESSION_HEADER } from './replies.js';
import { resolveSession, type SessionLookup } from './session-resolution.js';
import type { McpTransportDeps } from './transport-deps.js';

type CloseDeps = Pick<McpTransportDeps, 'catalog' | 'client'>;

/** How a per-user provider's upstream session is ended as the user ending the session: the target of their DELETE (refused: they cannot be sent as). */
export type AsUser = (provider: ProviderRecord) => Promise<UpstreamTarget>;

/** DELETE: ends the session, its server stream (on whichever replica holds it) and the upstream sessions it opened (as the caller). */
export async function endSession(
  deps: CloseDeps & SessionLookup & Pick<McpTransportDeps, 'sessions' | 'bus' | 'targets'>,
  c: Context,
): Promise<Response> {
  const principal = c.get('principal');
  const resolved = await resolveSession(deps, principal, endpointOf(c), c.req.header(SESSION_HEADER) ?? null);
  if (!resolved.ok) return replyResponse(resolved.reply);
  const { sid, protocolVersion } = resolved.session.claims;
  const upstreams = await deps.sessions.end(sid);
  await deps.bus.publish('mcp_session.ended', { sid });
  // The DELETE's caller is the session's (resolveSession checked it).
  await closeUpstreams(deps, upstreams ?? {}, asCaller(deps, c, principal, protocolVersion));
  return new Response(null, { status: 204 });
}

/** Ends per-user upstream sessions as this HTTP request's caller, at `clientVersion` (a token_exchange provider exchanges this request's bearer). */
export function asCaller(
  deps: Pick<McpTransportDeps, 'targets'>,
  c: Context,
  principal: Principal,
  clientVersion: string,
): AsUser {
  const request = {
    principal,
    requestId: c.get('requestId') ?? 'req_unknown',
    clientVersion,
    headers: c.req.raw.headers,
    capabilities: {},
  };
  return (provider) => deps.targets.forRequest(provider, request);
}

/** The caller whose `initialize` evicted sessions: their owner string (`sessionOwner`) and how to end upstream sessions as them. */
export interface EvictingCaller {
  owner: string;
  asUser: AsUser;
}

/**
 * Sessions dropped by the store (evicted past their owner's cap, or the in-process store's total):
 * their server streams end and their upstream sessions close (behind the caller's answer; never
 * rejects). One of the evicting caller's own has its per-user upstream sessions ended as them; one
 * of another owner (only the in-process store's total evicts those) only its shared providers' —
 * its per-user ones are left to expire upstream, never ended with another user's credentials.
 */
export async function dropEvicted(
  deps: CloseDeps & Pick<McpTransportDeps, 'bus'>,
  evicted: readonly EvictedSession[],
  caller: EvictingCaller,
): Promise<void> {
  await Promise.all(
    evicted.flatMap((old) => [
      deps.bus.publish('mcp_session.ended', { sid: old.sid }).catch(() => undefined),
      closeUpstreams(deps, old.upstreams, old.owner === caller.owner ? caller.asUser : null),
    ]),
  );
}

/**
 * Ends a gateway session's upstream sessions (DELETE to each provider; never throws). A per-user
 * provider's is ended `asUser`, with the user's own auth (RequestTargets, as any forwarded request);
 * without it (null, or refused: disconnected, no user) it is left to expire upstream, since a
 * per-user provider is never sent a request without the user's auth. Others go with the
 * provider's own auth.
 */
export async function closeUpstreams(
  deps: CloseDeps,
  upstreams: Record<string, UpstreamSession>,
  asUser: AsUser | null,
): Promise<void> {
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
  const shared = sharedTargetOf(provider, () => {
    try {
      return deps.catalog.providers.authSecret(provider);
    } catch {
      return null;
    }
  });
  if (shared !== null) return shared;
  return asUser === null ? null : asUser(provider);
}
