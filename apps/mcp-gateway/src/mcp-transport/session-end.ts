import type { UpstreamSession } from '@agentgw/mcp-client';
import type { Context } from 'hono';
import { upstreamTarget } from '../upstream-targets.js';
import { endpointOf } from './endpoint.js';
import { replyResponse, SESSION_HEADER } from './replies.js';
import { resolveSession, type SessionLookup } from './session-resolution.js';
import type { McpTransportDeps } from './transport-deps.js';

type CloseDeps = Pick<McpTransportDeps, 'catalog' | 'client'>;

/** DELETE: ends the session and closes the upstream sessions it opened. */
export async function endSession(deps: CloseDeps & SessionLookup & Pick<McpTransportDeps, 'sessions'>, c: Context): Promise<Response> {
  const resolved = await resolveSession(deps, c.get('principal'), endpointOf(c), c.req.header(SESSION_HEADER) ?? null);
  if (!resolved.ok) return replyResponse(resolved.reply);
  await closeUpstreams(deps, (await deps.sessions.end(resolved.session.claims.sid)) ?? {});
  return new Response(null, { status: 204 });
}

/** Ends a gateway session's upstream sessions (DELETE to each provider; never throws). */
export async function closeUpstreams(deps: CloseDeps, upstreams: Record<string, UpstreamSession>): Promise<void> {
  await Promise.all(
    Object.entries(upstreams).map(async ([providerId, upstream]) => {
      const provider = await deps.catalog.providers.get(providerId).catch(() => null);
      if (!provider) return;
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
