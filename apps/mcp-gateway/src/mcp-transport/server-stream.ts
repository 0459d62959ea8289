import type { Principal } from '@agentgw/auth';
import type { GatewayEvents, Unsubscribe } from '@agentgw/core';
import { isModernVersion, JSON_RPC } from '@agentgw/mcp-client';
import { clientGoneSignal, sseComment, SseStream } from '@agentgw/service-kit';
import type { Context } from 'hono';
import { credentialExpiry } from '../credential-expiry.js';
import { followListChanges } from '../gateway-list-changes.js';
import { GATEWAY_RPC } from '../rpc-errors.js';
import type { SessionClaims } from '../session-ids.js';
import { endpointOf } from './endpoint.js';
import { jsonResponse, refusal, replyResponse, rpcError, SESSION_HEADER } from './replies.js';
import { resolveSession, type SessionLookup } from './session-resolution.js';
import { followUpstreamStreams, type UpstreamStreamDeps } from '../relay/upstream-server-streams.js';
import type { McpTransportDeps } from './transport-deps.js';
import { resumeFromLastEventId } from '../stream-resumption/resumed-stream.js';

const HEARTBEAT_MS = 25_000;
/** Server streams (GET) one caller (user, else agent) may hold open on a replica; one more is a 429, so nobody exhausts sockets or bus subscriptions. */
export const MAX_SERVER_STREAMS_PER_CALLER = 16;
/** Agent changes after which a stream opened by the agent must not go on (the client reconnects if it still may). */
const REVOKING_AGENT_CHANGES: ReadonlySet<GatewayEvents['agent.changed']['change']> = new Set([
  'disabled',
  'deleted',
  'token_rotated',
]);
/** The longest delay setTimeout takes (2^31 - 1 ms, ~24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

type StreamDeps = Pick<McpTransportDeps, 'bus' | 'clock' | 'streams' | 'resumption'> &
  SessionLookup &
  UpstreamStreamDeps;

/** Open server streams per caller on this replica (see MAX_SERVER_STREAMS_PER_CALLER). */
export class ServerStreamCounts {
  private readonly open = new Map<string, number>();

  /** Counts one more stream for `caller`, unless it holds the most it may already. */
  take(caller: string): boolean {
    const held = this.open.get(caller) ?? 0;
    if (held >= MAX_SERVER_STREAMS_PER_CALLER) return false;
    this.open.set(caller, held + 1);
    return true;
  }

  release(caller: string): void {
    const left = (this.open.get(caller) ?? 1) - 1;
    if (left > 0) this.open.set(caller, left);
    else this.open.delete(caller);
  }
}

/** GET: the session's server stream, carrying list_changed notifications when providers or rules change. */
export async function serverStream(deps: StreamDeps, counts: ServerStreamCounts, c: Context): Promise<Response> {
  const headerVersion = c.req.header('mcp-protocol-version');
  if (headerVersion !== undefined && isModernVersion(headerVersion)) {
    const body = rpcError(null, JSON_RPC.INVALID_REQUEST, 'Method not allowed: 2026-07-28 has no server stream on GET');
    return jsonResponse(body, 405, { allow: 'POST' });
  }
  if (!(c.req.header('accept') ?? '').includes('text/event-stream')) {
    return replyResponse(
      refusal(406, JSON_RPC.INVALID_REQUEST, 'Not Acceptable: the client must accept text/event-stream'),
    );
  }
  const principal: Principal = c.get('principal');
  const resolved = await resolveSession(deps, principal, endpointOf(c), c.req.header(SESSION_HEADER) ?? null);
  if (!resolved.ok) return replyResponse(resolved.reply);
  const { claims } = resolved.session;
  const caller = claims.userId !== null ? `user:${claims.userId}` : `agent:${claims.agentId ?? ''}`;
  if (!counts.take(caller)) {
    const message = `At most ${MAX_SERVER_STREAMS_PER_CALLER} open server streams per caller`;
    return jsonResponse(
      rpcError(null, GATEWAY_RPC.RATE_LIMITED, message, { code: 'RATE_LIMITED', message, retryAfter: 5 }),
      429,
      { 'retry-after': '5' },
    );
  }
  const headers = { [SESSION_HEADER]: c.req.header(SESSION_HEADER) ?? claims.sid };
  const resumed = await resumeFromLastEventId(deps.resumption, c, claims.sid, headers, () => counts.release(caller));
  if (resumed) return resumed;
  const stream = openServerStream(deps, c, principal, claims, () => counts.release(caller));
  return stream.response(headers);
}

/**
 * The stream outlives no credential and no session: it ends when the caller's user or end user
 * changes (roles, tenant, deletion), its agent is disabled, deleted or re-keyed, its API key
 * changes, the JWT it was opened with expires, or its session is ended or evicted (on any
 * replica). The client reconnects and authenticates again.
 */
function openServerStream(
  deps: StreamDeps,
  c: Context,
  principal: Principal,
  claims: SessionClaims,
  released: () => void,
): SseStream {
  const connection = clientGoneSignal(c);
  const end = () => stream.close();
  let expiry: NodeJS.Timeout | undefined;
  const unsubscribes: Promise<Unsubscribe>[] = [];
  let stopUpstreams = (): void => undefined;
  let stopListChanges = (): void => undefined;
  const stream = new SseStream({
    heartbeatMs: HEARTBEAT_MS,
    signal: connection.signal,
    onEnd: () => {
      released();
      clearTimeout(expiry);
      connection.dispose();
      deps.streams.delete(end);
      stopUpstreams();
      stopListChanges();
      for (const u of unsubscribes) void u.then((off) => off()).catch(() => undefined);
    },
  });
  // Gone before it opened: nothing to subscribe for.
  if (!stream.open) return stream;
  stopListChanges = followListChanges(deps.bus, (method) =>
    stream.send({ event: 'message', data: { jsonrpc: '2.0', method } }),
  ).stop;
  unsubscribes.push(
    deps.bus.subscribe(
      'user.changed',
      ({ userId }) => void ((userId === claims.userId || userId === claims.endUserId) && end()),
    ),
    deps.bus.subscribe(
      'agent.changed',
      ({ agentId, change }) => void (agentId === claims.agentId && REVOKING_AGENT_CHANGES.has(change) && end()),
    ),
    deps.bus.subscribe('apikey.changed', ({ keyId }) => void (keyId === principal.apiKey?.id && end())),
    deps.bus.subscribe('mcp_session.ended', ({ sid }) => void (sid === claims.sid && end())),
  );
  deps.streams.add(end);
  stream.write(sseComment('stream open'));
  // What upstreams send on their own streams in this session (logs, resource updates, roots/sampling/elicitation requests) comes out here.
  stopUpstreams = followUpstreamStreams(deps, {
    sid: claims.sid,
    principal,
    capabilities: claims.caps ?? {},
    headers: c.req.raw.headers,
    send: (message) => stream.send({ event: 'message', data: message }),
  });
  const expiresAt = credentialExpiry(c.req.raw.headers);
  // Re-armed in steps: a timer longer than MAX_TIMER_MS would fire at once.
  const expire = (): void => {
    const left = expiresAt! - deps.clock.now().getTime();
    if (left <= 0) return end();
    expiry = setTimeout(expire, Math.min(left, MAX_TIMER_MS));
    expiry.unref();
  };
  if (expiresAt !== null) expire();
  return stream;
}
