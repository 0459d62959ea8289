import { EndpointSplits } from '@agentgw/core';
import { request, type Dispatcher } from 'undici';
import { Deadline } from './deadline.js';
import { McpUpstreamError } from './errors.js';
import { postOver } from './http-exchange.js';
import { jsonLinesOf } from './json-lines.js';
import { mcpNameOf, withEnvelope } from './modern-envelope.js';
import {
  isJsonRpcNotification,
  isJsonRpcRequest,
  isJsonRpcResponse,
  JSON_RPC,
  MODERN_PROTOCOL_VERSION,
  type JsonRpcResponse,
} from './protocol.js';
import type { ServerRequestHandler, UpstreamCallOptions, UpstreamSession, UpstreamTarget } from './upstream-call.js';
import { readAnswerStream } from './upstream-stream.js';

/** How many endpoints' parsed form (and target keys' offered capabilities) are kept: a bound against misuse, not a cache size. */
export const MAX_REMEMBERED_ENDPOINTS = 1_000;

/** What one POST brought back: its status, the session id the upstream named, the response to the request (null for none). */
export interface RawExchange {
  status: number;
  sessionId: string | null;
  response: JsonRpcResponse | null;
}

/** The handlers a call gives for what an upstream sends besides the response. */
type AnswerHandlers = Pick<UpstreamCallOptions, 'onNotification' | 'onRequest' | 'onStreamPaused'>;

/** Who receives what an upstream sends besides the response: the call's handlers, on the session it came on (a server request is answered there). */
export interface MessageRoute {
  target: UpstreamTarget;
  session: UpstreamSession;
  onNotification: UpstreamCallOptions['onNotification'];
  onRequest: ServerRequestHandler | undefined;
}

/** How one POST is made: on a modern (2026-07-28) request or the initialize handshake, the headers differ. */
interface PostShape extends AnswerHandlers {
  initializing?: boolean;
  modern?: boolean;
}

/**
 * One upstream HTTP exchange at a time: a JSON-RPC message POSTed with the headers its revision
 * wants, its answer read (JSON, JSON lines or SSE) until the response. Holds only the connection
 * pool, the client's identity and the request ids, so any number of calls share one.
 */
export class UpstreamExchange {
  private readonly endpoints = new EndpointSplits(MAX_REMEMBERED_ENDPOINTS);
  private nextId = 1;

  constructor(
    readonly dispatcher: Dispatcher,
    readonly clientInfo: { name: string; version: string },
    readonly maxResponseBytes: number,
  ) {}

  /** Sends one request and reads its answer; on a session revision, a call that ends early is cancelled upstream. */
  async call(
    target: UpstreamTarget,
    session: UpstreamSession,
    method: string,
    params: Record<string, unknown> | undefined,
    deadline: Deadline,
    options: AnswerHandlers & Pick<UpstreamCallOptions, 'clientCapabilities'>,
    flags: { initializing?: boolean } = {},
  ): Promise<RawExchange> {
    const id = this.nextId++;
    const modern =
      session.sessionId === null && session.protocolVersion === MODERN_PROTOCOL_VERSION && !flags.initializing;
    const finalParams = modern ? withEnvelope(params, this.clientInfo, options.clientCapabilities) : params;
    const message = { jsonrpc: '2.0', id, method, ...(finalParams ? { params: finalParams } : {}) };
    const shape: PostShape = {
      onNotification: options.onNotification,
      onRequest: options.onRequest,
      onStreamPaused: options.onStreamPaused,
      initializing: flags.initializing,
      modern,
    };
    const sessionId = session.sessionId;
    if (modern || sessionId === null) return this.post(target, session, message, deadline, id, shape);
    // Session protocols learn of a dropped call through notifications/cancelled.
    const stopWatching = deadline.onEnd(() => {
      this.notify(target, session, 'notifications/cancelled', { requestId: id, reason: 'client went away' }).catch(
        () => undefined,
      );
    });
    try {
      return await this.post(target, session, message, deadline, id, shape);
    } finally {
      stopWatching();
    }
  }

  /** POSTs a message that has no answer (a notification, a response) within the call's deadline. */
  send(
    target: UpstreamTarget,
    session: UpstreamSession,
    message: Record<string, unknown>,
    deadline: Deadline,
  ): Promise<RawExchange> {
    return this.post(target, session, message, deadline, undefined, {});
  }

  /** Sends a notification on its own 5 s deadline: failures are reported, not retried. */
  async notify(
    target: UpstreamTarget,
    session: UpstreamSession,
    method: string,
    params?: Record<string, unknown>,
  ): Promise<void> {
    const deadline = new Deadline(5_000, undefined);
    try {
      await this.send(target, session, { jsonrpc: '2.0', method, ...(params ? { params } : {}) }, deadline);
    } catch (err) {
      throw deadline.translate(err);
    } finally {
      deadline.dispose();
    }
  }

  /** POSTs the answer to a server request on its own 5 s deadline; an HTTP status outside 2xx is a failure. */
  async respond(target: UpstreamTarget, session: UpstreamSession, response: JsonRpcResponse): Promise<void> {
    const deadline = new Deadline(5_000, undefined);
    try {
      const { status } = await this.send(target, session, response, deadline);
      if (status < 200 || status >= 300)
        throw new McpUpstreamError('http', `upstream answered HTTP ${status} to a response`, status);
    } catch (err) {
      throw deadline.translate(err);
    } finally {
      deadline.dispose();
    }
  }

  /** The HTTP DELETE that ends a session upstream. Never throws: the upstream expires abandoned sessions on its own. */
  async end(target: UpstreamTarget, sessionId: string, protocolVersion: string): Promise<void> {
    try {
      const { body } = await request(target.endpoint, {
        method: 'DELETE',
        dispatcher: this.dispatcher,
        headers: { ...target.headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': protocolVersion },
        signal: AbortSignal.timeout(5_000),
      });
      await body.dump();
    } catch {
      // The upstream expires abandoned sessions on its own.
    }
  }

  /** What an upstream sent besides the response, to the call's handlers: notifications as they are, requests to `onRequest` (else refused). */
  handOn(route: MessageRoute, message: unknown): void {
    if (isJsonRpcNotification(message)) route.onNotification?.(message);
    else if (isJsonRpcRequest(message)) {
      if (route.onRequest) return route.onRequest(message, route.session);
      const refusal: JsonRpcResponse = {
        jsonrpc: '2.0',
        id: message.id,
        error: { code: JSON_RPC.METHOD_NOT_FOUND, message: `Method not found: ${message.method.slice(0, 100)}` },
      };
      // In the background, so the upstream is not left waiting and the call is not held.
      this.respond(route.target, route.session, refusal).catch(() => undefined);
    }
  }

  /** One HTTP POST; reads a JSON or SSE answer until the response to `id` arrives (capped). */
  private async post(
    target: UpstreamTarget,
    session: UpstreamSession,
    message: Record<string, unknown>,
    deadline: Deadline,
    id: number | undefined,
    shape: PostShape,
  ): Promise<RawExchange> {
    const endpoint = this.endpoints.of(target.endpoint);
    const headers = postHeaders(target, session, message, shape);
    const post = { origin: endpoint.origin, path: endpoint.path, headers, body: JSON.stringify(message) };
    const answer = await postOver(this.dispatcher, post, deadline, {
      wantBody: id !== undefined,
      maxBytes: this.maxResponseBytes,
      streamJson: message.method === 'subscriptions/listen',
    });
    const sessionId = answer.sessionId ?? session.sessionId ?? null;
    const body = answer.body;
    if (id === undefined || body === null) return { status: answer.status, sessionId, response: null };
    const route: MessageRoute = {
      target,
      session: { protocolVersion: session.protocolVersion, sessionId },
      onNotification: shape.onNotification,
      onRequest: shape.onRequest,
    };
    const handOn = (other: unknown): void => this.handOn(route, other);
    if (!Buffer.isBuffer(body)) {
      const response = await readAnswerStream(body, id, {
        dispatcher: this.dispatcher,
        endpoint,
        target,
        session: route.session,
        deadline,
        maxBytes: this.maxResponseBytes,
        framing: answer.framing,
        handOn,
        onStreamPaused: shape.onStreamPaused,
      });
      return { status: answer.status, sessionId, response };
    }
    const parsed = parseAnswer(body.toString('utf8'), id, handOn);
    return { status: answer.status, sessionId, response: isJsonRpcResponse(parsed) ? parsed : null };
  }
}

/** The headers of a POST: the target's, content negotiation, the session's, and on 2026-07-28 `Mcp-Method`/`Mcp-Name`. */
function postHeaders(
  target: UpstreamTarget,
  session: UpstreamSession,
  message: Record<string, unknown>,
  shape: PostShape,
): string[] {
  const headers: string[] = [];
  for (const [name, value] of Object.entries(target.headers ?? {})) headers.push(name, value);
  headers.push('content-type', 'application/json', 'accept', 'application/json, text/event-stream');
  if (!shape.initializing) headers.push('mcp-protocol-version', session.protocolVersion);
  if (session.sessionId !== null) headers.push('mcp-session-id', session.sessionId);
  if (shape.modern && typeof message.method === 'string') {
    headers.push('mcp-method', message.method);
    const name = mcpNameOf(message.method, message.params as Record<string, unknown> | undefined);
    if (name !== undefined) headers.push('mcp-name', name);
  }
  return headers;
}

/** A buffered answer's JSON value; newline-delimited messages (a notification, then the response) handed on until the response to `id`. */
function parseAnswer(text: string, id: number, handOn: (message: unknown) => void): unknown {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    for (const message of jsonLinesOf(text)) {
      if (isJsonRpcResponse(message) && message.id === id) return message;
      handOn(message);
    }
    return null;
  }
}
