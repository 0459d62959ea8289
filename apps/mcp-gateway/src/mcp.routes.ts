import { flexibleAuth, tenantScope, type AuthService, type Principal } from '@agentgw/auth';
import type { Catalog } from '@agentgw/catalog';
import { RateLimitedError, type CallQuota, type Clock, type EventBus, type GatewayEvents, type Logger, type Unsubscribe } from '@agentgw/core';
import {
  BATCH_PROTOCOL_VERSION,
  DEFAULT_ASSUMED_VERSION,
  formatSseMessage,
  isModernVersion,
  isSupportedVersion,
  JSON_RPC,
  LATEST_LEGACY_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  META_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JsonRpcNotification,
  type JsonRpcResponse,
  type McpUpstreamClient,
  type UpstreamSession,
} from '@agentgw/mcp-client';
import { Hono, type Context } from 'hono';
import { annotateAccessLog, clientGoneSignal } from '@agentgw/service-kit';
import { classify, metaOf, type Incoming } from './json-rpc-messages.js';
import type { McpEndpoint, McpPipeline, McpRequestContext } from './mcp-pipeline.js';
import { CONFIRMATION_TOKEN_META, resultForClient, SERVER_INFO, serverCapabilities } from './revision-shapes.js';
import { credentialExpiry } from './credential-expiry.js';
import type { OriginPolicy } from './origins.js';
import { GATEWAY_RPC } from './rpc-errors.js';
import { sessionBelongsTo, sessionOwner, type SessionClaims, type SessionIdCodec } from './session-ids.js';
import type { SessionStore } from './session-store.js';
import { upstreamTarget } from './upstream-targets.js';

/** What the MCP transport needs beside the pipeline: auth, sessions, Origin policy, the bus for server streams. */
export interface McpRoutesDeps {
  auth: AuthService;
  catalog: Catalog;
  client: McpUpstreamClient;
  pipeline: McpPipeline;
  sessions: SessionStore;
  codec: SessionIdCodec;
  origins: OriginPolicy;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  /** Open server streams (GET), ended on shutdown. */
  streams: Set<() => void>;
  /** Per-agent and per-tenant call quotas (shared with invoke). */
  quota: CallQuota;
}

const SESSION_HEADER = 'mcp-session-id';
const HEARTBEAT_MS = 25_000;
/** Server streams (GET) one caller (user, else agent) may hold open on a replica; one more is a 429, so nobody exhausts sockets or bus subscriptions. */
const MAX_SERVER_STREAMS_PER_CALLER = 16;
/** Agent changes after which a stream opened by the agent must not go on (the client reconnects if it still may). */
const REVOKING_AGENT_CHANGES: ReadonlySet<GatewayEvents['agent.changed']['change']> = new Set(['disabled', 'deleted', 'token_rotated']);
/** The longest delay setTimeout takes (2^31 - 1 ms, ~24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Messages one JSON-RPC batch (2025-03-26) may hold; a longer one is refused whole (400, -32600). */
export const MAX_BATCH_MESSAGES = 20;

type Reply = { body: unknown; status: number };

const rpcError = (id: string | number | null, code: number, message: string, data?: Record<string, unknown>): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code, message, ...(data ? { data } : {}) },
});

/**
 * MCP Streamable HTTP on `/api/v1/mcp/mcp` (unified) and `/api/v1/mcp-proxy/:providerId/mcp`:
 * POST carries JSON-RPC (JSON or SSE answers by Accept), GET opens a session's server stream,
 * DELETE ends a session and the upstream sessions it opened. Sessions (2024-11-05 … 2025-11-25)
 * are sealed into `Mcp-Session-Id` and kept in the session store; 2026-07-28 is stateless.
 */
export function mcpRoutes(deps: McpRoutesDeps): Hono {
  const app = new Hono();
  const auth = flexibleAuth(deps.auth, { sessionTokens: 'accept' });

  const endpointOf = (c: Context): McpEndpoint => {
    const providerId = c.req.param('providerId');
    if (providerId !== undefined) return { kind: 'proxy', providerId };
    const raw = c.req.query('providers');
    const ids = raw === undefined ? [] : raw.split(',').map((s) => s.trim()).filter(Boolean);
    return { kind: 'unified', providerFilter: ids.length > 0 ? ids : null };
  };
  const scopeOf = (endpoint: McpEndpoint) => (endpoint.kind === 'proxy' ? `proxy:${endpoint.providerId}` : 'unified');

  // DNS-rebinding protection comes before anything else, authentication included.
  const checkOrigin = async (c: Context, next: () => Promise<void>) => {
    if (!deps.origins.allows(c.req.header('origin'))) {
      return c.json(rpcError(null, JSON_RPC.INVALID_REQUEST, 'Origin not allowed'), 403);
    }
    await next();
  };

  const json = (c: Context, reply: Reply, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(reply.body), { status: reply.status, headers: { 'content-type': 'application/json', ...headers } });

  /** The session a legacy request names, or a reply explaining why it cannot continue. */
  async function resolveSession(c: Context, principal: Principal, endpoint: McpEndpoint, id: string | null) {
    if (id === null) return { reply: { body: rpcError(null, JSON_RPC.INVALID_REQUEST, 'Bad Request: Mcp-Session-Id header is required'), status: 400 } };
    const claims = deps.codec.open(id);
    const notFound = { reply: { body: rpcError(null, GATEWAY_RPC.SESSION_NOT_FOUND, 'Session not found'), status: 404 } };
    if (!claims || claims.scope !== scopeOf(endpoint) || !sessionBelongsTo(claims, principal)) return notFound;
    const upstreams = await deps.sessions.get(claims.sid);
    if (upstreams === null) return notFound;
    return { session: { claims, upstreams } };
  }

  /** The refusal when `count` more calls would exceed the principal's quotas, else null. */
  async function overQuota(principal: Principal, count: number): Promise<RateLimitedError | null> {
    try {
      for (let i = 0; i < count; i++) await deps.quota.take({ agentId: principal.agentId, tenant: tenantScope(principal) });
      return null;
    } catch (err) {
      if (err instanceof RateLimitedError) return err;
      throw err;
    }
  }

  async function post(c: Context): Promise<Response> {
    const principal = c.get('principal');
    const endpoint = endpointOf(c);
    const text = await c.req.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return json(c, { body: rpcError(null, JSON_RPC.PARSE_ERROR, 'Parse error: the body is not JSON'), status: 400 });
    }
    const headerVersion = c.req.header('mcp-protocol-version') ?? null;
    if (headerVersion !== null && !isSupportedVersion(headerVersion)) {
      return json(c, {
        body: rpcError(null, JSON_RPC.INVALID_REQUEST, `Bad Request: unsupported MCP-Protocol-Version ${headerVersion.slice(0, 40)}`, { supported: [...SUPPORTED_PROTOCOL_VERSIONS] }),
        status: 400,
      });
    }
    const batch = Array.isArray(body);
    // One POST may not fan out into more calls (and held confirmations) than this.
    if (batch && (body as unknown[]).length > MAX_BATCH_MESSAGES) {
      return json(c, { body: rpcError(null, JSON_RPC.INVALID_REQUEST, `A batch may hold at most ${MAX_BATCH_MESSAGES} messages`, { limit: MAX_BATCH_MESSAGES }), status: 400 });
    }
    const items: Incoming[] = (batch ? (body as unknown[]) : [body]).map(classify);
    if (batch && items.length === 0) return json(c, { body: rpcError(null, JSON_RPC.INVALID_REQUEST, 'An empty batch is invalid'), status: 400 });
    if (!batch && items[0]!.kind === 'invalid') {
      const bad = items[0] as Extract<Incoming, { kind: 'invalid' }>;
      return json(c, { body: rpcError(bad.id, bad.code, bad.message), status: 400 });
    }
    const first = items.find((i): i is Extract<Incoming, { kind: 'request' | 'notification' }> => i.kind === 'request' || i.kind === 'notification');
    // The access-log line names the method and tool (a batch: its first, and its length); only built when the line is written.
    if (first && c.var.accessLog) {
      const tool = first.message.method === 'tools/call' ? first.message.params?.name : undefined;
      annotateAccessLog(c, { rpcMethod: first.message.method, ...(typeof tool === 'string' ? { toolName: tool } : {}), ...(batch ? { rpcBatch: items.length } : {}) });
    }

    // initialize opens a session (alone: it may not be batched).
    if (first?.kind === 'request' && first.message.method === 'initialize') {
      if (batch) return json(c, { body: rpcError(null, JSON_RPC.INVALID_REQUEST, 'initialize cannot be part of a batch'), status: 400 });
      return initialize(c, principal, endpoint, first.message);
    }

    // The revision (README: "How the gateway picks the revision of a request"): a 2026-07-28
    // request says so in its `_meta` (or header); one naming a session speaks the session's; one
    // with neither is served statelessly at the header's legacy revision, else the newest.
    const metaVersion = first ? metaOf(first.message.params)[META_PROTOCOL_VERSION] : undefined;
    const modern = (typeof metaVersion === 'string' && metaVersion !== '') || (headerVersion !== null && isModernVersion(headerVersion));
    let protocolVersion: string;
    let session: McpRequestContext['session'] = null;
    const sessionHeader = c.req.header(SESSION_HEADER) ?? null;
    if (modern) {
      const requested = typeof metaVersion === 'string' ? metaVersion : headerVersion!;
      if (!isSupportedVersion(requested) || !isModernVersion(requested)) {
        return json(c, {
          body: rpcError(first?.kind === 'request' ? first.message.id : null, JSON_RPC.UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${String(requested).slice(0, 40)}`, {
            supported: [...SUPPORTED_PROTOCOL_VERSIONS],
            requested,
          }),
          status: 400,
        });
      }
      if (headerVersion !== null && headerVersion !== requested) {
        return json(c, { body: rpcError(null, JSON_RPC.INVALID_REQUEST, 'MCP-Protocol-Version does not match the request _meta'), status: 400 });
      }
      if (batch) return json(c, { body: rpcError(null, JSON_RPC.INVALID_REQUEST, `Batches are not supported by protocol version ${requested}`), status: 400 });
      protocolVersion = requested;
    } else if (sessionHeader === null) {
      protocolVersion = headerVersion ?? LATEST_LEGACY_VERSION;
      if (batch && protocolVersion !== BATCH_PROTOCOL_VERSION) {
        return json(c, { body: rpcError(null, JSON_RPC.INVALID_REQUEST, `Batches are not supported by protocol version ${protocolVersion} (a sessionless batch needs MCP-Protocol-Version: ${BATCH_PROTOCOL_VERSION})`), status: 400 });
      }
    } else {
      const resolved = await resolveSession(c, principal, endpoint, sessionHeader);
      if (resolved.reply) return json(c, resolved.reply);
      session = resolved.session;
      protocolVersion = session.claims.protocolVersion;
      if (headerVersion !== null && headerVersion !== protocolVersion && headerVersion !== DEFAULT_ASSUMED_VERSION) {
        return json(c, { body: rpcError(null, JSON_RPC.INVALID_REQUEST, 'MCP-Protocol-Version does not match the session'), status: 400 });
      }
      if (batch && protocolVersion !== BATCH_PROTOCOL_VERSION) {
        return json(c, { body: rpcError(null, JSON_RPC.INVALID_REQUEST, `Batches are not supported by protocol version ${protocolVersion}`), status: 400 });
      }
    }
    const sessionHeaders: Record<string, string> = session && sessionHeader ? { [SESSION_HEADER]: sessionHeader } : {};

    const requests = items.filter((i): i is Extract<Incoming, { kind: 'request' }> => i.kind === 'request');
    const invalid = items.filter((i): i is Extract<Incoming, { kind: 'invalid' }> => i.kind === 'invalid');
    if (requests.length === 0 && invalid.length === 0) return new Response(null, { status: 202, headers: sessionHeaders });

    // Every request counts against the agent's and the tenant's quotas; past either, the POST is
    // refused as a whole: HTTP 429, Retry-After, and a JSON-RPC error carrying the error body.
    const limited = await overQuota(principal, requests.length);
    if (limited) {
      const id = batch ? null : (requests[0]?.message.id ?? null);
      const data = { ...limited.toBody(), retryAfter: limited.retryAfterSeconds };
      return json(c, { body: rpcError(id, GATEWAY_RPC.RATE_LIMITED, limited.message, data), status: 429 }, { ...sessionHeaders, 'retry-after': String(limited.retryAfterSeconds) });
    }

    const accept = c.req.header('accept') ?? '';
    const wantsSse = accept.includes('text/event-stream');
    const takesJson = accept === '' || accept.includes('application/json') || accept.includes('*/*');
    const streamed = wantsSse && (!takesJson || requests.some((r) => r.message.method === 'tools/call'));

    // Its AbortSignal is made only if a call going upstream reads it; a cached tools/list never does.
    const connection = clientGoneSignal(c);

    const contextFor = (request: Extract<Incoming, { kind: 'request' }>['message'], notify: McpRequestContext['notify']): McpRequestContext => {
      const meta = metaOf(request.params);
      const metaToken = meta[CONFIRMATION_TOKEN_META];
      const progress = meta.progressToken;
      return {
        principal,
        requestId: c.get('requestId') ?? 'req_unknown',
        endpoint,
        protocolVersion,
        session,
        get signal() {
          return connection.signal;
        },
        notify,
        confirmationToken: c.req.header('x-confirmation-token') ?? (typeof metaToken === 'string' ? metaToken : null),
        progressToken: typeof progress === 'string' || typeof progress === 'number' ? progress : null,
        reauthenticate: () => deps.auth.authenticate(c.req.raw.headers, 'flexible'),
      };
    };
    const shape = (method: string, response: JsonRpcResponse): JsonRpcResponse =>
      'result' in response ? { ...response, result: resultForClient(method, response.result, protocolVersion) } : response;
    const invalidReplies = invalid.map((bad) => rpcError(bad.id, bad.code, bad.message));

    if (!streamed) {
      try {
        const answers = await Promise.all(requests.map((r) => deps.pipeline.handle(r.message, contextFor(r.message, null))));
        if (connection.gone()) return new Response(null, { status: 499 });
        const responses = answers.map((a, i) => (a ? shape(requests[i]!.message.method, a.response) : null)).filter((r): r is JsonRpcResponse => r !== null);
        if (!batch) return json(c, { body: responses[0], status: answers[0]?.status ?? 200 }, sessionHeaders);
        return json(c, { body: [...invalidReplies, ...responses], status: 200 }, sessionHeaders);
      } finally {
        connection.dispose();
      }
    }

    // SSE is only committed to once there is something to stream (progress, a held call's
    // status): an answer that is ready first goes out as JSON with its HTTP status (403, 502, …).
    const encoder = new TextEncoder();
    let sink: ReadableStreamDefaultController<Uint8Array> | null = null;
    let open = true;
    const pendingWrites: unknown[] = [];
    const write = (value: unknown) => {
      if (!open) return;
      if (!sink) {
        pendingWrites.push(value);
        return;
      }
      try {
        sink.enqueue(encoder.encode(formatSseMessage(value)));
      } catch {
        open = false;
      }
    };
    const finish = () => {
      connection.dispose();
      if (!open) return;
      open = false;
      try {
        sink?.close();
      } catch {
        // Already closed by a cancel.
      }
    };
    const sseResponse = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controllerOfStream) {
            sink = controllerOfStream;
            for (const value of pendingWrites.splice(0)) write(value);
          },
          cancel() {
            connection.abort();
          },
        }),
        { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', ...sessionHeaders } },
      );
    for (const reply of invalidReplies) write(reply);
    let streaming = batch;
    let startStreaming!: () => void;
    const started = new Promise<null>((resolve) => (startStreaming = () => resolve(null)));
    const notify = (n: JsonRpcNotification) => {
      write(n);
      if (!streaming) {
        streaming = true;
        startStreaming();
      }
    };
    const work = Promise.all(
      requests.map(async (r) => {
        const answer = await deps.pipeline.handle(r.message, contextFor(r.message, notify));
        return answer ? { method: r.message.method, ...answer } : null;
      }),
    );
    if (batch) startStreaming();
    const settled = await Promise.race([work, started]);
    if (settled !== null && !streaming) {
      finish();
      const answer = settled[0];
      if (!answer) return new Response(null, { status: 499 });
      return json(c, { body: shape(answer.method, answer.response), status: answer.status }, sessionHeaders);
    }
    streaming = true;
    void work
      .then((answers) => {
        for (const answer of answers) if (answer) write(shape(answer.method, answer.response));
      })
      .finally(finish);
    return sseResponse();
  }

  async function initialize(c: Context, principal: Principal, endpoint: McpEndpoint, request: Extract<Incoming, { kind: 'request' }>['message']): Promise<Response> {
    const requested = request.params?.protocolVersion;
    if (typeof requested !== 'string' || typeof request.params?.clientInfo !== 'object' || request.params.clientInfo === null) {
      return json(c, { body: rpcError(request.id, JSON_RPC.INVALID_PARAMS, 'initialize needs params.protocolVersion and params.clientInfo'), status: 200 });
    }
    // Negotiation: the client's version when we speak it, else our latest session version.
    const version = (LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(requested) ? requested : LATEST_LEGACY_VERSION;
    if (endpoint.kind === 'proxy') await deps.catalog.providers.getFor(principal, endpoint.providerId);
    const { id, claims } = deps.codec.issue(principal, version, scopeOf(endpoint), deps.clock.now());
    // Past the caller's cap the least recently used sessions go; their upstream sessions are ended behind the answer.
    const evicted = await deps.sessions.create(claims.sid, sessionOwner(claims));
    for (const old of evicted) void closeUpstreams(old.upstreams);
    const result = { protocolVersion: version, capabilities: serverCapabilities(endpoint), serverInfo: SERVER_INFO };
    const response = { jsonrpc: '2.0', id: request.id, result };
    const accept = c.req.header('accept') ?? '';
    if (accept.includes('text/event-stream') && !accept.includes('application/json')) {
      return new Response(formatSseMessage(response), { status: 200, headers: { 'content-type': 'text/event-stream', [SESSION_HEADER]: id } });
    }
    return json(c, { body: response, status: 200 }, { [SESSION_HEADER]: id });
  }

  /** GET: the session's server stream, carrying list_changed notifications when providers or rules change. */
  async function get(c: Context): Promise<Response> {
    const principal = c.get('principal');
    const endpoint = endpointOf(c);
    const headerVersion = c.req.header('mcp-protocol-version');
    if (headerVersion !== undefined && isModernVersion(headerVersion)) {
      return new Response(JSON.stringify(rpcError(null, JSON_RPC.INVALID_REQUEST, 'Method not allowed: 2026-07-28 has no server stream on GET')), {
        status: 405,
        headers: { allow: 'POST', 'content-type': 'application/json' },
      });
    }
    if (!(c.req.header('accept') ?? '').includes('text/event-stream')) {
      return json(c, { body: rpcError(null, JSON_RPC.INVALID_REQUEST, 'Not Acceptable: the client must accept text/event-stream'), status: 406 });
    }
    const resolved = await resolveSession(c, principal, endpoint, c.req.header(SESSION_HEADER) ?? null);
    if (resolved.reply) return json(c, resolved.reply);
    const caller = resolved.session.claims.userId !== null ? `user:${resolved.session.claims.userId}` : `agent:${resolved.session.claims.agentId ?? ''}`;
    if ((openStreams.get(caller) ?? 0) >= MAX_SERVER_STREAMS_PER_CALLER) {
      const message = `At most ${MAX_SERVER_STREAMS_PER_CALLER} open server streams per caller`;
      return json(c, { body: rpcError(null, GATEWAY_RPC.RATE_LIMITED, message, { code: 'RATE_LIMITED', message, retryAfter: 5 }), status: 429 }, { 'retry-after': '5' });
    }
    return serverStream(c, principal, resolved.session.claims, caller);
  }

  /** Open server streams per caller on this replica (see MAX_SERVER_STREAMS_PER_CALLER). */
  const openStreams = new Map<string, number>();

  /**
   * The stream outlives no credential: it ends when the caller's user or end user changes (roles,
   * tenant, deletion), its agent is disabled, deleted or re-keyed, its API key changes, or the
   * JWT it was opened with expires. The client reconnects and authenticates again.
   */
  function serverStream(c: Context, principal: Principal, claims: SessionClaims, caller: string): Response {
    const encoder = new TextEncoder();
    const unsubscribes: Promise<Unsubscribe>[] = [];
    const expiresAt = credentialExpiry(c.req.raw.headers);
    let timer: NodeJS.Timeout | undefined;
    let expiry: NodeJS.Timeout | undefined;
    let end = () => undefined as void;
    const stream = new ReadableStream<Uint8Array>({
      start(sink) {
        let open = true;
        const send = (chunk: string) => {
          if (!open) return;
          try {
            sink.enqueue(encoder.encode(chunk));
          } catch {
            end();
          }
        };
        const changed = (methods: string[]) => () => methods.forEach((method) => send(formatSseMessage({ jsonrpc: '2.0', method })));
        unsubscribes.push(
          deps.bus.subscribe('providers.changed', changed(['notifications/tools/list_changed', 'notifications/resources/list_changed', 'notifications/prompts/list_changed'])),
          deps.bus.subscribe('rules.changed', changed(['notifications/tools/list_changed'])),
          deps.bus.subscribe('user.changed', ({ userId }) => {
            if (userId === claims.userId || userId === claims.endUserId) end();
          }),
          deps.bus.subscribe('agent.changed', ({ agentId, change }) => {
            if (agentId === claims.agentId && REVOKING_AGENT_CHANGES.has(change)) end();
          }),
          deps.bus.subscribe('apikey.changed', ({ keyId }) => {
            if (keyId === principal.apiKey?.id) end();
          }),
        );
        timer = setInterval(() => send(': keep-alive\n\n'), HEARTBEAT_MS);
        timer.unref();
        end = () => {
          if (!open) return;
          open = false;
          const left = (openStreams.get(caller) ?? 1) - 1;
          if (left > 0) openStreams.set(caller, left);
          else openStreams.delete(caller);
          clearInterval(timer);
          clearTimeout(expiry);
          deps.streams.delete(end);
          for (const u of unsubscribes) void u.then((off) => off()).catch(() => undefined);
          try {
            sink.close();
          } catch {
            // Already cancelled.
          }
        };
        deps.streams.add(end);
        openStreams.set(caller, (openStreams.get(caller) ?? 0) + 1);
        const connection = clientGoneSignal(c);
        connection.signal.addEventListener('abort', () => end(), { once: true });
        send(': stream open\n\n');
        // Re-armed in steps: a timer longer than MAX_TIMER_MS would fire at once.
        const expire = () => {
          const left = expiresAt! - deps.clock.now().getTime();
          if (left <= 0) return end();
          expiry = setTimeout(expire, Math.min(left, MAX_TIMER_MS));
          expiry.unref();
        };
        if (expiresAt !== null) expire();
      },
      cancel() {
        end();
      },
    });
    return new Response(stream, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', [SESSION_HEADER]: c.req.header(SESSION_HEADER) ?? claims.sid },
    });
  }

  /** DELETE: ends the session and closes the upstream sessions it opened. */
  async function del(c: Context): Promise<Response> {
    const principal = c.get('principal');
    const endpoint = endpointOf(c);
    const resolved = await resolveSession(c, principal, endpoint, c.req.header(SESSION_HEADER) ?? null);
    if (resolved.reply) return json(c, resolved.reply);
    await closeUpstreams((await deps.sessions.end(resolved.session.claims.sid)) ?? {});
    return new Response(null, { status: 204 });
  }

  /** Ends a gateway session's upstream sessions (DELETE to each provider; never throws). */
  async function closeUpstreams(upstreams: Record<string, UpstreamSession>): Promise<void> {
    await Promise.all(
      Object.entries(upstreams).map(async ([providerId, upstream]) => {
        const provider = await deps.catalog.providers.get(providerId).catch(() => null);
        if (!provider) return;
        const secret = (() => {
          try {
            return deps.catalog.providers.authSecret(provider);
          } catch {
            return null;
          }
        })();
        await deps.client.close(upstreamTarget(provider, secret, null), upstream);
      }),
    );
  }

  for (const path of ['/api/v1/mcp/mcp', '/api/v1/mcp-proxy/:providerId/mcp']) {
    app.use(path, checkOrigin, auth);
    app.post(path, post);
    app.get(path, get);
    app.delete(path, del);
  }
  return app;
}
