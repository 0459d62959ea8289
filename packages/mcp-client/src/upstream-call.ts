import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, UpstreamEra } from './protocol.js';

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

/**
 * A caller's going away as a call takes it: an AbortSignal, or an emitter of one `'abort'` with an
 * `aborted` flag — a server's client connection, which then makes no AbortController per call.
 */
export type CallerSignal = AbortSignal | AbortEmitter;

/** The emitter form of `CallerSignal` (a Node EventEmitter with an `aborted` flag fits). */
export interface AbortEmitter {
  readonly aborted: boolean;
  once(event: 'abort', listener: () => void): unknown;
  off(event: 'abort', listener: () => void): unknown;
}

/** Per-call options: cancellation, deadline, the session to continue, streamed notifications. */
export interface UpstreamCallOptions {
  /** Aborted when the caller goes away: the upstream request is aborted (and cancelled on session protocols). */
  signal?: CallerSignal;
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

/** The upstream's answer and the session it was given on. */
export interface UpstreamCallResult {
  response: JsonRpcResponse;
  /** The session used, which differs from the one passed in when the upstream's had expired and a new one was opened. */
  session: UpstreamSession;
  /** The upstream's HTTP status: 2xx, or the 4xx a JSON-RPC error came with (a gateway keeps it: 2026-07-28 gives 400/404 meaning). */
  status: number;
}
