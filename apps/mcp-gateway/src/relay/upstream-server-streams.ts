import type { Principal } from '@agentgw/auth';
import type { Catalog } from '@agentgw/catalog';
import type { EventBus, Logger } from '@agentgw/core';
import type {
  JsonRpcMessage,
  JsonRpcNotification,
  McpUpstreamClient,
  ServerStreamOutcome,
  UpstreamSession,
} from '@agentgw/mcp-client';
import type { SessionStore } from '../session-store.js';
import { clientOwner } from './relay-contract.js';
import type { ServerRequestRelay } from './server-request-relay.js';

/** How often a client's server stream looks for upstream sessions opened since (by a POST on any replica), and retries one whose stream failed to open. */
export const UPSTREAM_SYNC_MS = 1_000;

/** Failed openings of one upstream session's stream in a row after which it is no longer tried (a 409 while another replica still holds it passes within one or two). */
export const MAX_FOLLOW_FAILURES = 5;

/** Notifications an upstream sends on its own stream that the client sees as they are (list changes are the gateway's own). */
const PASSED_ON: ReadonlySet<string> = new Set([
  'notifications/message',
  'notifications/resources/updated',
  'notifications/progress',
]);

/** What following a session's upstream streams needs. */
export interface UpstreamStreamDeps {
  client: Pick<McpUpstreamClient, 'listen'>;
  catalog: Pick<Catalog, 'providers'>;
  sessions: Pick<SessionStore, 'get'>;
  relay: Pick<ServerRequestRelay, 'relay' | 'targetFor'>;
  /** Carries `mcp_session.upstream_opened` from the replica that opened an upstream session. */
  bus: Pick<EventBus, 'subscribe'>;
  logger: Logger;
}

/** The client session a server stream (GET) belongs to, and how to write on that stream. */
export interface ClientStreamEnd {
  sid: string;
  principal: Principal;
  /** The relayable capabilities the client declared in initialize. */
  capabilities: Readonly<Record<string, unknown>>;
  /** The stream request's headers: a `token_exchange` provider exchanges its bearer. */
  headers: Pick<Headers, 'get'>;
  send(message: JsonRpcMessage): void;
}

/**
 * The session store the forwarding records opened upstream sessions in, announcing each on the
 * bus: the session's server stream, on whichever replica holds it, starts following the new
 * upstream session at once. An upstream may ask right after its handshake (server-everything asks
 * for roots 350 ms after it), and what it sends while nobody holds its stream is dropped, so the
 * periodic read alone (up to UPSTREAM_SYNC_MS later) lost such requests across replicas.
 */
export function announcingUpstreams(sessions: SessionStore, bus: Pick<EventBus, 'publish'>): SessionStore {
  return new Proxy(sessions, {
    get(target, property, receiver) {
      if (property !== 'setUpstream') return Reflect.get(target, property, receiver) as unknown;
      return async (sid: string, providerId: string, session: UpstreamSession) => {
        await target.setUpstream(sid, providerId, session);
        // A lost announcement only delays the follow to the stream's next read of the store.
        await bus.publish('mcp_session.upstream_opened', { sid }).catch(() => undefined);
      };
    },
  });
}

interface Listening {
  sessionId: string;
  abort: AbortController;
}

/**
 * While a client holds its server stream (GET), the replica holding it holds the server stream
 * of every upstream session opened in that client session (a POST on any replica may open one:
 * the session store is read every UPSTREAM_SYNC_MS, and at once when any replica announces one,
 * see `announcingUpstreams`). What an upstream sends there reaches the
 * client's stream: log and resource-update notifications as they are, requests (roots, sampling,
 * elicitation) through the relay under a gateway id, answered by the client from any replica.
 * Returns the function that stops it all (the client's stream ended).
 */
export function followUpstreamStreams(deps: UpstreamStreamDeps, client: ClientStreamEnd): () => void {
  const listening = new Map<string, Listening>();
  /** Upstream sessions that have no server stream: not asked again (one whose stream ended is followed again). */
  const done = new Set<string>();
  /** Failed openings in a row, by upstream session: retried at each sync up to MAX_FOLLOW_FAILURES. */
  const failures = new Map<string, number>();
  let stopped = false;
  const settle = (sessionId: string, outcome: ServerStreamOutcome): void => {
    if (outcome === 'unsupported') done.add(sessionId);
    else if (outcome === 'ended') failures.delete(sessionId);
    else {
      const failed = (failures.get(sessionId) ?? 0) + 1;
      failures.set(sessionId, failed);
      if (failed >= MAX_FOLLOW_FAILURES) done.add(sessionId);
    }
  };
  const sync = async (): Promise<void> => {
    const upstreams = await deps.sessions.get(client.sid);
    if (stopped || upstreams === null) return;
    for (const [providerId, session] of Object.entries(upstreams)) {
      const current = listening.get(providerId);
      if (session.sessionId === null || done.has(session.sessionId) || current?.sessionId === session.sessionId)
        continue;
      current?.abort.abort();
      const entry: Listening = { sessionId: session.sessionId, abort: new AbortController() };
      listening.set(providerId, entry);
      void follow(deps, client, providerId, session, entry.abort.signal)
        .then((outcome) => settle(entry.sessionId, outcome))
        .catch(() => done.add(entry.sessionId))
        .finally(() => void (listening.get(providerId) === entry && listening.delete(providerId)));
    }
  };
  const tick = () =>
    void sync().catch((err: unknown) =>
      deps.logger.warn({ reason: err instanceof Error ? err.message : 'unknown' }, 'upstream stream sync failed'),
    );
  const timer = setInterval(tick, UPSTREAM_SYNC_MS);
  timer.unref();
  const announced = deps.bus.subscribe('mcp_session.upstream_opened', ({ sid }) => void (sid === client.sid && tick()));
  // The first read once subscribed, so an upstream opened while the subscription was being made is not missed.
  void announced.then(tick, tick);
  return () => {
    stopped = true;
    clearInterval(timer);
    void announced.then((off) => off()).catch(() => undefined);
    for (const entry of listening.values()) entry.abort.abort();
    listening.clear();
  };
}

/** Holds one upstream session's server stream until it ends or the client's does. */
async function follow(
  deps: UpstreamStreamDeps,
  client: ClientStreamEnd,
  providerId: string,
  session: UpstreamSession,
  signal: AbortSignal,
): Promise<ServerStreamOutcome> {
  const provider = await deps.catalog.providers.get(providerId);
  if (!provider) return 'unsupported';
  if (signal.aborted) return 'ended';
  // As the client (their own auth for a per-user provider); one refused there is not followed (the caller marks it done).
  const target = await deps.relay.targetFor(provider, {
    principal: client.principal,
    requestId: `stream_${client.sid.slice(0, 16)}`,
    headers: client.headers,
    capabilities: client.capabilities,
  });
  const channel = { owner: clientOwner(client.sid, client.principal), send: client.send };
  const onNotification = (n: JsonRpcNotification) => void (PASSED_ON.has(n.method) && client.send(n));
  return deps.client.listen(target, session, onNotification, signal, (request, on) =>
    deps.relay.relay(
      { provider, target, principal: client.principal, channel, capabilities: client.capabilities, call: null },
      request,
      on,
    ),
  );
}
