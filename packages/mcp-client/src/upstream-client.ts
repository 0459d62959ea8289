import { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { Deadline } from './deadline.js';
import { McpUpstreamError } from './errors.js';
import { postOver, type HttpAnswer } from './http-exchange.js';
import {
  isJsonRpcNotification,
  isJsonRpcRequest,
  isJsonRpcResponse,
  JSON_RPC,
  LATEST_LEGACY_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSION,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type UpstreamEra,
} from './protocol.js';
import { clientCapabilitiesKey } from './client-capabilities.js';
import { parseSse, type SseEvent } from './sse.js';
import { jsonLinesOf, parseJsonLines } from './json-lines.js';

/** Where a call goes and what extra headers (auth, identity) it carries. */
export interface UpstreamTarget {
  /** The upstream's Streamable HTTP endpoint. */
  endpoint: string;
  /**
   * Names this upstream for negotiation memory and the shared session (e.g. the provider id);
   * defaults to the endpoint. Two targets with different credentials need different keys.
   */
  key?: string;
  headers?: Record<string, string>;
  /**
   * Who the calls are made for (an opaque identity key: user, end user, agent, tenant, …). A
   * session shared by callers without their own is kept per key *and* principal, opened with
   * that principal's headers, so one upstream session never carries two principals' calls.
   */
  principal?: string;
  /** The era to prefer where the upstream offers both (`legacy`: a session is tried first, else its 2026-07-28 wire). Default: modern first. Give such a target its own `key`. */
  era?: UpstreamEra;
}

/**
 * What a call needs to continue a conversation with one upstream. Plain JSON, so a caller can
 * keep it outside the process (Redis, a sealed session id) and any replica can continue it.
 * `sessionId` is null for 2026-07-28 (stateless) upstreams and for session servers that issued none.
 */
export interface UpstreamSession {
  protocolVersion: string;
  sessionId: string | null;
}

/** Per-call options: cancellation, deadline, the session to continue, streamed notifications. */
export interface UpstreamCallOptions {
  /** Aborted when the caller goes away: the upstream request is aborted (and cancelled on session protocols). */
  signal?: AbortSignal;
  timeoutMs?: number;
  /**
   * The session to use for a session-protocol upstream, e.g. one a gateway session opened.
   * Omitted: the session shared by this client's calls for the target and its principal (opened once).
   */
  session?: UpstreamSession;
  /** Notifications the upstream sends while answering (progress, logging), in order. */
  onNotification?: (notification: JsonRpcNotification) => void;
  /** The upstream closed its answer stream before the response (SEP-1699 polling) and it is resumed after `retryMs`: a proxy may pause its own client's stream likewise. */
  onStreamPaused?: (retryMs: number) => void;
  /**
   * The client capabilities to declare: in the 2026-07-28 `_meta` envelope, and in `initialize`
   * when a session is opened (a shared session is kept per capability set).
   */
  clientCapabilities?: Record<string, unknown>;
  /**
   * A request the upstream sends while answering (sampling, elicitation, roots, on a session
   * revision), with the session it came on: the caller answers it with `respond`. Without it,
   * the client answers `Method not found` itself so the upstream does not wait.
   */
  onRequest?: ServerRequestHandler;
}

/** Receives a server-to-client request and the upstream session to `respond` on. */
export type ServerRequestHandler = (request: JsonRpcRequest, session: UpstreamSession) => void;

/** Where an answer stream is read from: what a resumption (GET + Last-Event-ID) and an answer to a server request need. */
interface StreamContext {
  target: UpstreamTarget;
  session: UpstreamSession;
  deadline: Deadline;
  onNotification: ((notification: JsonRpcNotification) => void) | undefined;
  onRequest: ServerRequestHandler | undefined;
  onStreamPaused: ((retryMs: number) => void) | undefined;
}

/** The upstream's answer and the session it was given on. */
export interface UpstreamCallResult {
  response: JsonRpcResponse;
  /** The session used, which differs from the one passed in when the upstream's had expired and a new one was opened. */
  session: UpstreamSession;
  /** The upstream's HTTP status: 2xx, or the 4xx a JSON-RPC error came with (a gateway keeps it: 2026-07-28 gives 400/404 meaning). */
  status: number;
}

/** How a client identifies itself, connects and bounds what it reads. */
export interface McpUpstreamClientOptions {
  clientInfo?: { name: string; version: string };
  /** undici dispatcher (e.g. an egress-policy agent). Default: one keep-alive pool per upstream origin. */
  dispatcher?: Dispatcher;
  /** Per-call deadline unless the call gives its own. */
  timeoutMs?: number;
  /** The most bytes read from one upstream response; more is an error, never an out-of-memory. */
  maxResponseBytes?: number;
  /** How many shared sessions (per target and principal) are kept; the least recently used is closed upstream. */
  maxSharedSessions?: number;
}

/** Defaults: a call's deadline and the most bytes read from one answer. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Default bound of the shared sessions one client keeps (see McpUpstreamClientOptions.maxSharedSessions). */
export const DEFAULT_MAX_SHARED_SESSIONS = 1_000;

/** How many times one answer stream is resumed (GET + Last-Event-ID) before the call fails; the deadline bounds it too. */
export const MAX_STREAM_RESUMPTIONS = 50;
/** The wait before resuming a stream whose upstream gave no `retry`. */
export const DEFAULT_RESUME_DELAY_MS = 1_000;

/** How many endpoints' parsed form is kept (see endpointParts). */
const MAX_REMEMBERED_ENDPOINTS = 1_000;

type Era = { kind: 'modern' } | { kind: 'legacy'; protocolVersion: string };

/** A session shared by callers without their own, for one target key and principal. */
interface SharedSession {
  /** The target's key (negotiation stays per key; sessions are per key and principal). */
  key: string;
  /** The target it was opened with (its auth and identity headers close it). */
  target: UpstreamTarget;
  session: Promise<UpstreamSession>;
  /** The session once open, so close() finds it without waiting. */
  opened: UpstreamSession | null;
}

interface RawExchange {
  status: number;
  sessionId: string | null;
  response: JsonRpcResponse | null;
}

/**
 * A lean MCP client for Streamable HTTP upstreams: JSON-RPC over undici keep-alive pools,
 * every protocol revision from 2024-11-05 to 2026-07-28, negotiated once per upstream and
 * remembered. Holds no per-conversation state the caller cannot store elsewhere: sessions are
 * passed in and handed back as plain values.
 */
export class McpUpstreamClient {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly clientInfo: { name: string; version: string };
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly eras = new Map<string, Era>();
  /** What each target key's upstream said it offers (its initialize or server/discover `capabilities`). */
  private readonly offered = new Map<string, Readonly<Record<string, unknown>>>();
  /** Least recently used first (a use moves an entry to the end). */
  private readonly sharedSessions = new Map<string, SharedSession>();
  private readonly maxSharedSessions: number;
  private readonly endpoints = new Map<string, { origin: string; path: string }>();
  private nextId = 1;

  constructor(options: McpUpstreamClientOptions = {}) {
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, connections: 128, pipelining: 1 });
    this.clientInfo = options.clientInfo ?? { name: 'agentgw', version: '1.0.0' };
    this.timeoutMs = options.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.maxSharedSessions = Math.max(1, options.maxSharedSessions ?? DEFAULT_MAX_SHARED_SESSIONS);
  }

  /**
   * Sends one request and waits for its response. Upstream JSON-RPC errors come back as
   * responses; transport failures throw McpUpstreamError.
   */
  async request(
    target: UpstreamTarget,
    method: string,
    params: Record<string, unknown> | undefined,
    options: UpstreamCallOptions = {},
  ): Promise<UpstreamCallResult> {
    const deadline = this.deadline(options);
    try {
      let session = options.session ?? (await this.sharedSession(target, deadline, options));
      let retried = false;
      for (;;) {
        const exchange = await this.exchange(target, session, method, params, deadline, options);
        if (exchange.response && exchange.status < 300)
          return { response: exchange.response, session, status: exchange.status };
        // 404 on a session means it expired upstream; a stateless upstream answering like a
        // session server was replaced by one: renegotiate once, then report.
        const answeredUs = exchange.response !== null && exchange.response.id !== null;
        const stale = exchange.status === 404 || (session.sessionId === null && exchange.status === 400 && !answeredUs);
        if (!retried && stale) {
          retried = true;
          session = await this.renegotiate(target, session, options, deadline);
          continue;
        }
        if (exchange.response && exchange.status >= 400 && exchange.status < 500 && 'error' in exchange.response) {
          return { response: exchange.response, session, status: exchange.status };
        }
        throw new McpUpstreamError('http', `upstream answered HTTP ${exchange.status}`, exchange.status);
      }
    } catch (err) {
      throw deadline.translate(err);
    } finally {
      deadline.dispose();
    }
  }

  /** Sends a notification (no response expected). Failures are reported, not retried. */
  async notify(
    target: UpstreamTarget,
    session: UpstreamSession,
    method: string,
    params?: Record<string, unknown>,
  ): Promise<void> {
    const deadline = this.deadline({ timeoutMs: 5_000 });
    try {
      await this.post(
        target,
        session,
        { jsonrpc: '2.0', method, ...(params ? { params } : {}) },
        deadline,
        undefined,
        {},
      );
    } catch (err) {
      throw deadline.translate(err);
    } finally {
      deadline.dispose();
    }
  }

  /**
   * Answers a request the upstream sent (see `onRequest`): a POST of the JSON-RPC response on
   * the session it came on, from any process (the session is a value). Throws McpUpstreamError
   * when the upstream does not accept it (HTTP status outside 2xx, unreachable, 5 s deadline).
   */
  async respond(target: UpstreamTarget, session: UpstreamSession, response: JsonRpcResponse): Promise<void> {
    const deadline = this.deadline({ timeoutMs: 5_000 });
    try {
      const { status } = await this.post(target, session, response, deadline, undefined, {});
      if (status < 200 || status >= 300)
        throw new McpUpstreamError('http', `upstream answered HTTP ${status} to a response`, status);
    } catch (err) {
      throw deadline.translate(err);
    } finally {
      deadline.dispose();
    }
  }

  /**
   * Opens a conversation: `server/discover` first (a 2026-07-28 upstream answers it), else the
   * session handshake (initialize + notifications/initialized). The era is remembered per target.
   */
  async open(
    target: UpstreamTarget,
    options: Pick<UpstreamCallOptions, 'signal' | 'timeoutMs' | 'clientCapabilities'> = {},
  ): Promise<UpstreamSession> {
    const deadline = this.deadline(options);
    try {
      return await this.openWithin(target, deadline, options);
    } catch (err) {
      throw deadline.translate(err);
    } finally {
      deadline.dispose();
    }
  }

  /** Ends a session upstream (HTTP DELETE); a stateless upstream has nothing to end. Never throws. */
  async close(target: UpstreamTarget, session: UpstreamSession): Promise<void> {
    if (session.sessionId === null) return;
    try {
      const { body } = await request(target.endpoint, {
        method: 'DELETE',
        dispatcher: this.dispatcher,
        headers: {
          ...target.headers,
          'mcp-session-id': session.sessionId,
          'mcp-protocol-version': session.protocolVersion,
        },
        signal: AbortSignal.timeout(5_000),
      });
      await body.dump();
    } catch {
      // The upstream expires abandoned sessions on its own.
    }
    for (const [slot, shared] of this.sharedSessions) {
      if (shared.opened?.sessionId === session.sessionId) this.sharedSessions.delete(slot);
    }
  }

  /**
   * Holds a session upstream's server stream (HTTP GET) open and hands every notification on it
   * (e.g. `notifications/tools/list_changed`) to `onNotification`, until the stream ends or
   * `signal` aborts. `unsupported`: the upstream has no such stream (stateless, or it answered
   * without one); `ended`: it was open and has ended. An event larger than the response cap ends it.
   * Requests on it (sampling, elicitation, roots) go to `onRequest`, else are answered `Method not found`.
   */
  async listen(
    target: UpstreamTarget,
    session: UpstreamSession,
    onNotification: (notification: JsonRpcNotification) => void,
    signal: AbortSignal,
    onRequest?: ServerRequestHandler,
  ): Promise<'unsupported' | 'ended'> {
    if (session.sessionId === null) return 'unsupported';
    let res: Dispatcher.ResponseData;
    try {
      res = await request(target.endpoint, {
        method: 'GET',
        dispatcher: this.dispatcher,
        signal,
        headers: {
          ...target.headers,
          accept: 'text/event-stream',
          'mcp-session-id': session.sessionId,
          'mcp-protocol-version': session.protocolVersion,
        },
      });
    } catch {
      return signal.aborted ? 'ended' : 'unsupported';
    }
    if (res.statusCode !== 200 || !String(res.headers['content-type'] ?? '').includes('text/event-stream')) {
      await res.body.dump().catch(() => undefined);
      return 'unsupported';
    }
    try {
      for await (const event of parseSse(res.body as AsyncIterable<Buffer>, this.maxResponseBytes)) {
        if (event.event !== 'message') continue;
        let message: unknown;
        try {
          message = JSON.parse(event.data);
        } catch {
          continue;
        }
        if (isJsonRpcNotification(message)) onNotification(message);
        else if (isJsonRpcRequest(message)) this.serverRequest(target, session, message, onRequest);
      }
    } catch {
      res.body.destroy();
    }
    return 'ended';
  }

  /**
   * Every item of a paginated list (`tools/list` → `tools`, …), following cursors. Stops with
   * a `too_large` error past `maxItems` so a hostile upstream cannot page forever.
   */
  async listAll(
    target: UpstreamTarget,
    method: string,
    field: string,
    options: UpstreamCallOptions & { maxItems?: number } = {},
  ): Promise<{ items: Record<string, unknown>[]; session: UpstreamSession }> {
    const maxItems = options.maxItems ?? 10_000;
    const items: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    let session = options.session;
    for (let page = 0; ; page++) {
      const result = await this.request(target, method, cursor === undefined ? {} : { cursor }, {
        ...options,
        session,
      });
      session = result.session;
      if ('error' in result.response) {
        throw new McpUpstreamError(
          'protocol',
          `upstream refused ${method}: ${result.response.error.message}`.slice(0, 300),
        );
      }
      const list = result.response.result[field];
      if (!Array.isArray(list))
        throw new McpUpstreamError('protocol', `upstream ${method} result has no ${field} array`);
      for (const item of list)
        if (typeof item === 'object' && item !== null) items.push(item as Record<string, unknown>);
      if (items.length > maxItems || page > 1_000)
        throw new McpUpstreamError('too_large', `upstream ${method} has more than ${maxItems} items`);
      const next = result.response.result.nextCursor;
      if (typeof next !== 'string' || next === '') return { items, session: result.session };
      cursor = next;
    }
  }

  /**
   * What the upstream offers: the `capabilities` of its initialize or server/discover answer,
   * remembered per target key; unknown yet, a conversation is opened to learn it (and a session
   * opened only for that is ended). A proxy advertises its upstream's set, not a fixed one.
   */
  async serverCapabilities(
    target: UpstreamTarget,
    options: Pick<UpstreamCallOptions, 'signal' | 'timeoutMs' | 'clientCapabilities'> = {},
  ): Promise<Readonly<Record<string, unknown>>> {
    const known = this.offered.get(keyOf(target));
    if (known) return known;
    const session = await this.open(target, options);
    void this.close(target, session);
    return this.offered.get(keyOf(target)) ?? {};
  }

  /** The era remembered for a target, if any (for diagnostics and tests). */
  knownProtocol(target: UpstreamTarget): string | null {
    const era = this.eras.get(keyOf(target));
    if (!era) return null;
    return era.kind === 'modern' ? MODERN_PROTOCOL_VERSION : era.protocolVersion;
  }

  /** Forgets what a target speaks and its shared session (its endpoint or credentials changed). */
  forget(target: UpstreamTarget | string): void {
    const key = typeof target === 'string' ? target : keyOf(target);
    this.eras.delete(key);
    this.offered.delete(key);
    for (const [slot, shared] of this.sharedSessions) if (shared.key === key) this.sharedSessions.delete(slot);
  }

  /** Closes the connection pools this client created. */
  async destroy(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async sharedSession(
    target: UpstreamTarget,
    deadline: Deadline,
    options: UpstreamCallOptions,
  ): Promise<UpstreamSession> {
    const key = keyOf(target);
    const era = this.eras.get(key);
    if (era?.kind === 'modern') return { protocolVersion: MODERN_PROTOCOL_VERSION, sessionId: null };
    const slot = slotOf(key, target, options.clientCapabilities);
    const shared = this.sharedSessions.get(slot);
    if (shared) {
      // Most recently used last: eviction takes the first.
      this.sharedSessions.delete(slot);
      this.sharedSessions.set(slot, shared);
      return shared.session;
    }
    const entry: SharedSession = { key, target, session: this.openWithin(target, deadline, options), opened: null };
    this.sharedSessions.set(slot, entry);
    entry.session.then(
      (session) => (entry.opened = session),
      // A failed open must not poison later calls.
      () => {
        if (this.sharedSessions.get(slot) === entry) this.sharedSessions.delete(slot);
      },
    );
    if (this.sharedSessions.size > this.maxSharedSessions) this.evictSharedSession();
    return entry.session;
  }

  /** Drops the least recently used shared session and ends it upstream (in the background). */
  private evictSharedSession(): void {
    const [slot, oldest] = this.sharedSessions.entries().next().value as [string, SharedSession];
    this.sharedSessions.delete(slot);
    oldest.session.then(
      (session) => this.close(oldest.target, session),
      () => undefined,
    );
  }

  private async renegotiate(
    target: UpstreamTarget,
    stale: UpstreamSession,
    options: UpstreamCallOptions,
    deadline: Deadline,
  ): Promise<UpstreamSession> {
    const key = keyOf(target);
    if (stale.sessionId === null) this.eras.delete(key);
    const slot = slotOf(key, target, options.clientCapabilities);
    const shared = this.sharedSessions.get(slot);
    if (shared && (await shared.session.catch(() => null))?.sessionId === stale.sessionId)
      this.sharedSessions.delete(slot);
    if (options.session === undefined) return this.sharedSession(target, deadline, options);
    return this.openWithin(target, deadline, options);
  }

  private async openWithin(
    target: UpstreamTarget,
    deadline: Deadline,
    options: Pick<UpstreamCallOptions, 'clientCapabilities'>,
  ): Promise<UpstreamSession> {
    const key = keyOf(target);
    const known = this.eras.get(key);
    if (known === undefined && target.era === 'legacy') {
      // A session where the upstream offers one; a 2026-07-28-only upstream refuses initialize, and is spoken to on its own wire.
      const session = await this.initialize(target, deadline, options.clientCapabilities ?? {}).catch(
        (err: unknown) => {
          if (err instanceof McpUpstreamError && (err.kind === 'http' || err.kind === 'protocol')) return null;
          throw err;
        },
      );
      if (session) return session;
    }
    if (known?.kind !== 'legacy') {
      const modern = { protocolVersion: MODERN_PROTOCOL_VERSION, sessionId: null };
      const probe = await this.exchange(target, modern, 'server/discover', undefined, deadline, options);
      const versions =
        probe.response && 'result' in probe.response ? probe.response.result.supportedVersions : undefined;
      if (probe.status < 300 && Array.isArray(versions) && versions.includes(MODERN_PROTOCOL_VERSION)) {
        this.eras.set(key, { kind: 'modern' });
        this.offer(key, probe.response);
        return modern;
      }
    }
    return this.initialize(target, deadline, options.clientCapabilities ?? {});
  }

  private async initialize(
    target: UpstreamTarget,
    deadline: Deadline,
    capabilities: Record<string, unknown>,
  ): Promise<UpstreamSession> {
    const key = keyOf(target);
    const bootstrap = { protocolVersion: LATEST_LEGACY_VERSION, sessionId: null };
    const params = { protocolVersion: LATEST_LEGACY_VERSION, capabilities, clientInfo: this.clientInfo };
    const init = await this.exchange(target, bootstrap, 'initialize', params, deadline, {}, { initializing: true });
    if (!init.response || init.status >= 300)
      throw new McpUpstreamError('http', `upstream answered initialize with HTTP ${init.status}`, init.status);
    if ('error' in init.response)
      throw new McpUpstreamError('protocol', `upstream refused initialize (${init.response.error.code})`);
    const version = init.response.result.protocolVersion;
    if (typeof version !== 'string' || !(LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
      throw new McpUpstreamError('protocol', 'upstream chose a protocol version the gateway does not speak');
    }
    const session = { protocolVersion: version, sessionId: init.sessionId };
    await this.post(target, session, { jsonrpc: '2.0', method: 'notifications/initialized' }, deadline, undefined, {});
    this.eras.set(key, { kind: 'legacy', protocolVersion: version });
    this.offer(key, init.response);
    return session;
  }

  /** Remembers the capabilities an initialize or server/discover result named (an object; anything else is none). */
  private offer(key: string, response: JsonRpcResponse | null): void {
    const offered = response && 'result' in response ? response.result.capabilities : undefined;
    const capabilities = typeof offered === 'object' && offered !== null && !Array.isArray(offered) ? offered : {};
    // Keys are the targets' (a handful per provider); the bound only keeps a misuse from growing it.
    if (this.offered.size >= MAX_REMEMBERED_ENDPOINTS) this.offered.clear();
    this.offered.set(key, capabilities as Record<string, unknown>);
  }

  private async exchange(
    target: UpstreamTarget,
    session: UpstreamSession,
    method: string,
    params: Record<string, unknown> | undefined,
    deadline: Deadline,
    options: Pick<UpstreamCallOptions, 'onNotification' | 'clientCapabilities' | 'onRequest' | 'onStreamPaused'>,
    flags: { initializing?: boolean } = {},
  ): Promise<RawExchange> {
    const id = this.nextId++;
    const modern =
      session.sessionId === null && session.protocolVersion === MODERN_PROTOCOL_VERSION && !flags.initializing;
    const finalParams = modern ? withEnvelope(params, this.clientInfo, options.clientCapabilities) : params;
    const message = { jsonrpc: '2.0', id, method, ...(finalParams ? { params: finalParams } : {}) };
    const postOptions = {
      onNotification: options.onNotification,
      onRequest: options.onRequest,
      onStreamPaused: options.onStreamPaused,
      initializing: flags.initializing,
      modern,
    };
    const sessionId = session.sessionId;
    if (modern || sessionId === null) return this.post(target, session, message, deadline, id, postOptions);
    // Session protocols learn of a dropped call through notifications/cancelled.
    const stopWatching = deadline.onEnd(() => {
      this.notify(target, session, 'notifications/cancelled', { requestId: id, reason: 'client went away' }).catch(
        () => undefined,
      );
    });
    try {
      return await this.post(target, session, message, deadline, id, postOptions);
    } finally {
      stopWatching();
    }
  }

  /** One HTTP POST; reads a JSON or SSE answer until the response to `id` arrives (capped). */
  private async post(
    target: UpstreamTarget,
    session: UpstreamSession,
    message: Record<string, unknown>,
    deadline: Deadline,
    id: number | undefined,
    options: Pick<UpstreamCallOptions, 'onNotification' | 'onRequest' | 'onStreamPaused'> & {
      initializing?: boolean;
      modern?: boolean;
    },
  ): Promise<RawExchange> {
    const headers: string[] = [];
    for (const [name, value] of Object.entries(target.headers ?? {})) headers.push(name, value);
    headers.push('content-type', 'application/json', 'accept', 'application/json, text/event-stream');
    if (!options.initializing) headers.push('mcp-protocol-version', session.protocolVersion);
    if (session.sessionId !== null) headers.push('mcp-session-id', session.sessionId);
    if (options.modern && typeof message.method === 'string') {
      headers.push('mcp-method', message.method);
      const name = mcpNameOf(message.method, message.params as Record<string, unknown> | undefined);
      if (name !== undefined) headers.push('mcp-name', name);
    }
    const { origin, path } = this.endpointParts(target.endpoint);
    const answer = await postOver(this.dispatcher, { origin, path, headers, body: JSON.stringify(message) }, deadline, {
      wantBody: id !== undefined,
      maxBytes: this.maxResponseBytes,
      streamJson: message.method === 'subscriptions/listen',
    });
    const sessionId = answer.sessionId ?? session.sessionId ?? null;
    const body = answer.body;
    if (id === undefined || body === null) return { status: answer.status, sessionId, response: null };
    if (!Buffer.isBuffer(body)) {
      const stream = {
        target,
        session: { protocolVersion: session.protocolVersion, sessionId },
        deadline,
        onNotification: options.onNotification,
        onRequest: options.onRequest,
        onStreamPaused: options.onStreamPaused,
      };
      const response = await this.readStream(body, id, stream, answer.framing);
      return { status: answer.status, sessionId, response };
    }
    const text = body.toString('utf8');
    let parsed: unknown;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // Newline-delimited messages (a notification, then the response) in one JSON answer.
      parsed = this.takeMessages(
        jsonLinesOf(text),
        id,
        options,
        { protocolVersion: session.protocolVersion, sessionId },
        target,
      );
    }
    return { status: answer.status, sessionId, response: isJsonRpcResponse(parsed) ? parsed : null };
  }

  /** Messages read before the response: notifications and server requests handed on; the response to `id`, else null. */
  private takeMessages(
    messages: unknown[],
    id: number,
    options: Pick<UpstreamCallOptions, 'onNotification' | 'onRequest'>,
    session: UpstreamSession,
    target: UpstreamTarget,
  ): JsonRpcResponse | null {
    for (const message of messages) {
      if (isJsonRpcResponse(message) && message.id === id) return message;
      if (isJsonRpcNotification(message)) options.onNotification?.(message);
      else if (isJsonRpcRequest(message)) this.serverRequest(target, session, message, options.onRequest);
    }
    return null;
  }

  /** An endpoint split into undici's origin and path, once per endpoint. */
  private endpointParts(endpoint: string): { origin: string; path: string } {
    let parts = this.endpoints.get(endpoint);
    if (!parts) {
      const url = new URL(endpoint);
      parts = { origin: url.origin, path: `${url.pathname}${url.search}` };
      // Endpoints are the providers' (a handful); the bound only keeps a misuse from growing it.
      if (this.endpoints.size >= MAX_REMEMBERED_ENDPOINTS) this.endpoints.clear();
      this.endpoints.set(endpoint, parts);
    }
    return parts;
  }

  /**
   * Reads an SSE answer until the response to `id` arrives. On a session revision a stream that
   * ends without it but gave an event id (SEP-1699 polling: a priming event, then the upstream
   * closes) is resumed as a client does: after its `retry` (else DEFAULT_RESUME_DELAY_MS), a GET
   * with `Last-Event-ID`, read on; at most MAX_STREAM_RESUMPTIONS times, within the deadline. The
   * size cap counts every byte read over all of them.
   */
  private async readStream(
    first: Readable,
    id: number,
    ctx: StreamContext,
    framing: 'sse' | 'json-lines',
  ): Promise<JsonRpcResponse> {
    const cursor = { lastEventId: null as string | null, retryMs: DEFAULT_RESUME_DELAY_MS, bytes: 0 };
    let body = first;
    for (let resumed = 0; ; resumed++) {
      const response = await this.readEvents(body, id, ctx, cursor, framing);
      if (response) return response;
      // Only a session revision's stream with an event id can be resumed.
      const resumeFrom = ctx.session.protocolVersion === MODERN_PROTOCOL_VERSION ? null : cursor.lastEventId;
      if (resumeFrom === null || resumed >= MAX_STREAM_RESUMPTIONS)
        throw new McpUpstreamError('protocol', 'upstream stream ended without a response');
      ctx.onStreamPaused?.(cursor.retryMs);
      await pause(cursor.retryMs, ctx.deadline);
      body = await this.resumeStream(ctx, resumeFrom);
    }
  }

  /** One connection's events: notifications and server requests handed on, the cursor kept; the response when it comes, else null at its end. */
  private async readEvents(
    body: Readable,
    id: number,
    ctx: StreamContext,
    cursor: { lastEventId: string | null; retryMs: number; bytes: number },
    framing: 'sse' | 'json-lines',
  ): Promise<JsonRpcResponse | null> {
    const cap = this.maxResponseBytes;
    async function* capped() {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        cursor.bytes += chunk.length;
        if (cursor.bytes > cap) throw new McpUpstreamError('too_large', `upstream stream exceeds ${cap} bytes`);
        yield chunk;
      }
    }
    const messages = framing === 'sse' ? sseMessages(capped(), cursor) : parseJsonLines(capped());
    for await (const message of messages) {
      if (isJsonRpcResponse(message) && message.id === id) {
        body.destroy();
        return message;
      }
      if (isJsonRpcNotification(message)) ctx.onNotification?.(message);
      else if (isJsonRpcRequest(message)) this.serverRequest(ctx.target, ctx.session, message, ctx.onRequest);
    }
    return null;
  }

  /** The GET that resumes a session's stream after `lastEventId`; anything but an SSE answer fails the call. */
  private async resumeStream(ctx: StreamContext, lastEventId: string): Promise<Readable> {
    const { target, session } = ctx;
    const headers: string[] = [];
    for (const [name, value] of Object.entries(target.headers ?? {})) headers.push(name, value);
    headers.push(
      'accept',
      'text/event-stream',
      'mcp-protocol-version',
      session.protocolVersion,
      'last-event-id',
      lastEventId,
    );
    if (session.sessionId !== null) headers.push('mcp-session-id', session.sessionId);
    const { origin, path } = this.endpointParts(target.endpoint);
    const answer: HttpAnswer = await postOver(this.dispatcher, { origin, path, headers, body: null }, ctx.deadline, {
      wantBody: true,
      maxBytes: this.maxResponseBytes,
    });
    if (answer.status === 200 && answer.body instanceof Readable) return answer.body;
    throw new McpUpstreamError('protocol', `upstream did not resume its stream (HTTP ${answer.status})`);
  }

  /** A request from the upstream: to the caller's handler, else answered `Method not found` (in the background). */
  private serverRequest(
    target: UpstreamTarget,
    session: UpstreamSession,
    request: JsonRpcRequest,
    onRequest: ServerRequestHandler | undefined,
  ): void {
    if (onRequest) return onRequest(request, session);
    const refusal: JsonRpcResponse = {
      jsonrpc: '2.0',
      id: request.id,
      error: { code: JSON_RPC.METHOD_NOT_FOUND, message: `Method not found: ${request.method.slice(0, 100)}` },
    };
    this.respond(target, session, refusal).catch(() => undefined);
  }

  private deadline(options: { signal?: AbortSignal; timeoutMs?: number }): Deadline {
    return new Deadline(options.timeoutMs ?? this.timeoutMs, options.signal);
  }
}

const keyOf = (target: UpstreamTarget): string => target.key ?? target.endpoint;

/** Where a target's shared session is kept: its key, its principal when it has one, and the client capabilities it was opened with. */
const slotOf = (key: string, target: UpstreamTarget, capabilities: Record<string, unknown> | undefined): string => {
  const slot = target.principal === undefined ? key : `${key}\u0000${target.principal}`;
  const set = capabilities === undefined ? '' : clientCapabilitiesKey(capabilities);
  return set === '' ? slot : `${slot}\u0000${set}`;
};

/** The JSON texts of an SSE stream's message events, its resumption cursor kept as they pass. */
async function* sseMessages(
  chunks: AsyncIterable<Buffer>,
  cursor: { lastEventId: string | null; retryMs: number },
): AsyncGenerator<unknown> {
  for await (const event of parseSse(chunks)) {
    takeCursor(cursor, event);
    if (event.event !== 'message' || event.data === '') continue;
    try {
      yield JSON.parse(event.data) as unknown;
    } catch {
      // An event that is not JSON carries no message.
    }
  }
}

/** Keeps the resumption cursor of a stream: the last event id and the reconnection delay it asked for. */
function takeCursor(cursor: { lastEventId: string | null; retryMs: number }, event: SseEvent): void {
  if (event.id !== null) cursor.lastEventId = event.id;
  if (event.retry !== null) cursor.retryMs = event.retry;
}

/** Waits `ms`, or fails when the call's deadline ends first. */
function pause(ms: number, deadline: Deadline): Promise<void> {
  return new Promise((resolve, reject) => {
    let stop = (): void => undefined;
    const timer = setTimeout(() => {
      stop();
      resolve();
    }, ms);
    stop = deadline.onEnd((err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** The 2026-07-28 request envelope, with any caller-supplied `_meta` keys kept. */
function withEnvelope(
  params: Record<string, unknown> | undefined,
  clientInfo: { name: string; version: string },
  capabilities: Record<string, unknown> = {},
): Record<string, unknown> {
  const meta = (params?._meta ?? {}) as Record<string, unknown>;
  // `_meta` named before the spread: adding a key to a spread copy afterwards costs V8 several times more.
  const enveloped: Record<string, unknown> = { _meta: null, ...params };
  enveloped._meta = {
    [META_PROTOCOL_VERSION]: MODERN_PROTOCOL_VERSION,
    [META_CLIENT_INFO]: clientInfo,
    [META_CLIENT_CAPABILITIES]: capabilities,
    ...meta,
  };
  return enveloped;
}

/** The `Mcp-Name` header a 2026-07-28 request mirrors from its params. */
export function mcpNameOf(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const source =
    method === 'tools/call' || method === 'prompts/get'
      ? params?.name
      : method.startsWith('resources/')
        ? params?.uri
        : method.startsWith('tasks/')
          ? params?.taskId
          : undefined;
  return typeof source === 'string' ? source : undefined;
}
