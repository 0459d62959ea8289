import { Agent, type Dispatcher } from 'undici';
import { Deadline } from './deadline.js';
import { McpUpstreamError } from './errors.js';
import type { JsonRpcNotification, JsonRpcResponse } from './protocol.js';
import { holdServerStream, type ServerStreamOutcome } from './server-stream.js';
import type {
  CallerSignal,
  ServerRequestHandler,
  UpstreamCallOptions,
  UpstreamCallResult,
  UpstreamSession,
  UpstreamTarget,
} from './upstream-call.js';
import { UpstreamExchange, type MessageRoute } from './upstream-exchange.js';
import { UpstreamSessions } from './upstream-sessions.js';

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

/** Default deadline of a call (McpUpstreamClientOptions.timeoutMs): an upstream that hangs fails the call. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;
/** Default bound of the bytes read from one answer (McpUpstreamClientOptions.maxResponseBytes). */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Default bound of the shared sessions one client keeps (see McpUpstreamClientOptions.maxSharedSessions). */
export const DEFAULT_MAX_SHARED_SESSIONS = 1_000;

/**
 * A lean MCP client for Streamable HTTP upstreams: JSON-RPC over undici keep-alive pools,
 * every protocol revision from 2024-11-05 to 2026-07-28, negotiated once per upstream and
 * remembered. Holds no per-conversation state the caller cannot store elsewhere: sessions are
 * passed in and handed back as plain values. The work is done by its parts: the HTTP exchange
 * (`upstream-exchange.ts`), era negotiation and shared sessions (`upstream-sessions.ts`), a
 * session's server stream (`server-stream.ts`).
 */
export class McpUpstreamClient {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly timeoutMs: number;
  private readonly exchange: UpstreamExchange;
  private readonly sessions: UpstreamSessions;

  constructor(options: McpUpstreamClientOptions = {}) {
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, connections: 128, pipelining: 1 });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
    const clientInfo = options.clientInfo ?? { name: 'agentgw', version: '1.0.0' };
    const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.exchange = new UpstreamExchange(this.dispatcher, clientInfo, maxResponseBytes);
    const maxSharedSessions = Math.max(1, options.maxSharedSessions ?? DEFAULT_MAX_SHARED_SESSIONS);
    this.sessions = new UpstreamSessions(this.exchange, maxSharedSessions);
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
      let session = options.session ?? (await this.sessions.shared(target, deadline, options));
      let retried = false;
      for (;;) {
        const exchange = await this.exchange.call(target, session, method, params, deadline, options);
        if (exchange.response && exchange.status < 300)
          return { response: exchange.response, session, status: exchange.status };
        // 404 on a session means it expired upstream; a stateless upstream answering like a
        // session server was replaced by one: renegotiate once, then report.
        const answeredUs = exchange.response !== null && exchange.response.id !== null;
        const stale = exchange.status === 404 || (session.sessionId === null && exchange.status === 400 && !answeredUs);
        if (!retried && stale) {
          retried = true;
          session = await this.sessions.renegotiate(target, session, options, deadline);
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
  notify(
    target: UpstreamTarget,
    session: UpstreamSession,
    method: string,
    params?: Record<string, unknown>,
  ): Promise<void> {
    return this.exchange.notify(target, session, method, params);
  }

  /**
   * Answers a request the upstream sent (see `onRequest`): a POST of the JSON-RPC response on
   * the session it came on, from any process (the session is a value). Throws McpUpstreamError
   * when the upstream does not accept it (HTTP status outside 2xx, unreachable, 5 s deadline).
   */
  respond(target: UpstreamTarget, session: UpstreamSession, response: JsonRpcResponse): Promise<void> {
    return this.exchange.respond(target, session, response);
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
      return await this.sessions.open(target, deadline, options);
    } catch (err) {
      throw deadline.translate(err);
    } finally {
      deadline.dispose();
    }
  }

  /** Ends a session upstream (HTTP DELETE); a stateless upstream has nothing to end. Never throws. */
  close(target: UpstreamTarget, session: UpstreamSession): Promise<void> {
    return this.sessions.close(target, session);
  }

  /**
   * Holds a session upstream's server stream (HTTP GET) open and hands every notification on it
   * (e.g. `notifications/tools/list_changed`) to `onNotification`, until the stream ends or
   * `signal` aborts; how it ended is a `ServerStreamOutcome` (`failed`: try again later). An event
   * larger than the response cap ends it.
   * Requests on it (sampling, elicitation, roots) go to `onRequest`, else are answered `Method not found`.
   */
  listen(
    target: UpstreamTarget,
    session: UpstreamSession,
    onNotification: (notification: JsonRpcNotification) => void,
    signal: AbortSignal,
    onRequest?: ServerRequestHandler,
  ): Promise<ServerStreamOutcome> {
    const route: MessageRoute = { target, session, onNotification, onRequest };
    return holdServerStream({
      dispatcher: this.dispatcher,
      target,
      session,
      maxBytes: this.exchange.maxResponseBytes,
      signal,
      handOn: (message) => this.exchange.handOn(route, message),
    });
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
    const known = this.sessions.offeredBy(target);
    if (known) return known;
    const session = await this.open(target, options);
    void this.close(target, session);
    return this.sessions.offeredBy(target) ?? {};
  }

  /** The era remembered for a target, if any (for diagnostics and tests). */
  knownProtocol(target: UpstreamTarget): string | null {
    return this.sessions.knownProtocol(target);
  }

  /** Forgets what a target speaks and its shared session (its endpoint or credentials changed). */
  forget(target: UpstreamTarget | string): void {
    this.sessions.forget(target);
  }

  /** Closes the connection pools this client created. */
  async destroy(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private deadline(options: { signal?: CallerSignal; timeoutMs?: number }): Deadline {
    return new Deadline(options.timeoutMs ?? this.timeoutMs, options.signal);
  }
}
