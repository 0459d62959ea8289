import { requestHeader, requestHeaders } from '@agentgw/core';
import type { AuthService, Principal } from '@agentgw/auth';
import {
  isModernVersion,
  META_CLIENT_CAPABILITIES,
  NO_CLIENT_CAPABILITIES,
  relayableCapabilities,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '@agentgw/mcp-client';
import { SseStream, type ClientConnection } from '@agentgw/service-kit';
import type { Context } from 'hono';
import { metaOf } from '../json-rpc-messages.js';
import type { McpAnswer, McpEndpoint, McpRequestContext } from '../mcp-context.js';
import type { McpMethodRouter } from '../mcp-method-router.js';
import { authenticateMcpCaller, type ProtectedResources } from '../protected-resource/protected-resource.js';
import { CONFIRMATION_TOKEN_META, resultForClient } from '../revision-shapes.js';
import { clientOwner, type ClientChannel } from '../relay/relay-contract.js';
import type { Invalid, RequestItem } from './parse-and-negotiate.js';
import { answerHeaders, jsonResponse, rpcError } from './replies.js';
import { PausableAnswer, pausable } from '../stream-resumption/pausable-answer.js';
import type { ResumptionStore } from '../stream-resumption/resumption-store.js';
import type { OpenRequests } from './open-requests.js';

/** One POST's requests, once parsed, its revision and session settled and its quota taken: what answering them needs. */
export interface Exchange {
  c: Context;
  principal: Principal;
  endpoint: McpEndpoint;
  protocolVersion: string;
  session: McpRequestContext['session'];
  batch: boolean;
  requests: RequestItem[];
  invalid: Invalid[];
  /** `Mcp-Session-Id` echoed on answers in a session; NO_HEADERS outside one. */
  sessionHeaders: Readonly<Record<string, string>>;
  /** The client's connection: a call going upstream reads its signal, the answer checks it is still there. */
  connection: ClientConnection;
}

/** What answering reads: the method router that handles each request, and auth to re-check a released call's credentials. */
export interface RespondDeps {
  router: Pick<McpMethodRouter, 'handle'>;
  auth: Pick<AuthService, 'authenticate' | 'authenticateOAuth'>;
  resources: ProtectedResources;
  /** Where a paused answer's events wait for the client's resume (stream-resumption/). */
  resumption: ResumptionStore;
  /** A listen's stream has no answer for a long while: a keep-alive comment this often keeps proxies from closing it. */
  listenHeartbeatMs: number;
  /** The requests being answered here: a shutdown answers each of them (open-requests.ts). */
  open: OpenRequests;
}

/** Requests whose upstream may send something while answering (progress, logs, a sampling, elicitation or roots request). */
const MAY_STREAM: ReadonlySet<string> = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
  'completion/complete',
  'subscriptions/listen',
]);
/** The most bytes a listen's stream may leave unread before the client is cut off (its notifications are not bounded by an answer). */
const LISTEN_MAX_BUFFERED_BYTES = 1024 * 1024;
/** Past this many bytes unread on a call's stream, the upstream's further notifications (progress, logs) are dropped. */
export const NOTIFICATIONS_MAX_UNREAD_BYTES = 1024 * 1024;

/**
 * Answers the requests as JSON, or as SSE when the client asks for it (Accept) and would
 * take it: a client accepting both gets SSE only for a request in MAY_STREAM, and only once there is
 * something to stream (see `answerStreamed`).
 */
export function respond(deps: RespondDeps, x: Exchange): Promise<Response> {
  const accept = requestHeader(x.c, 'accept') ?? '';
  const wantsSse = accept.includes('text/event-stream');
  const takesJson = accept === '' || accept.includes('application/json') || accept.includes('*/*');
  const streamed = wantsSse && (!takesJson || x.requests.some((r) => MAY_STREAM.has(r.message.method)));
  return streamed ? answerStreamed(deps, x) : answerAsJson(deps, x);
}

/** The JSON answer: one response (with its HTTP status), or a batch's array; 499 when the client left meanwhile. */
async function answerAsJson(deps: RespondDeps, x: Exchange): Promise<Response> {
  try {
    const answers = await Promise.all(
      x.requests.map((r) =>
        deps.open.track(r.message, deps.router.handle(r.message, requestContext(deps, x, r.message, null, null))),
      ),
    );
    if (x.connection.gone()) return new Response(null, { status: 499 });
    if (!x.batch) {
      const answer = answers[0];
      if (!answer) return jsonResponse(undefined, 200, x.sessionHeaders);
      return jsonResponse(
        shaped(x.requests[0]!.message.method, answer.response, x.protocolVersion),
        answer.status,
        answerHeaders(answer.response, answer.status, x.sessionHeaders),
      );
    }
    const responses = x.invalid.map(invalidReply);
    answers.forEach(
      (a, i) => a && responses.push(shaped(x.requests[i]!.message.method, a.response, x.protocolVersion)),
    );
    return jsonResponse(responses, 200, x.sessionHeaders);
  } finally {
    x.connection.dispose();
  }
}

/**
 * The SSE answer. It is only committed to once there is something to stream (progress, a held
 * call's status; a batch at once): an answer that is ready first goes out as JSON with its HTTP
 * status (403, 502, …). Notifications, then the answers, go through the one SSE writer.
 */
async function answerStreamed(deps: RespondDeps, x: Exchange): Promise<Response> {
  let stream: SseStream | null = null;
  let startStreaming!: (value: null) => void;
  const started = new Promise<null>((resolve) => (startStreaming = resolve));
  // The writes are bounded by the requests' own answers: no slow-reader cut-off; the client leaving aborts the calls.
  const listens = x.requests.some((r) => r.message.method === 'subscriptions/listen');
  const maxBufferedBytes = listens ? LISTEN_MAX_BUFFERED_BYTES : Infinity;
  const heartbeat = listens ? { heartbeatMs: deps.listenHeartbeatMs } : {};
  const open = () =>
    (stream = new SseStream({
      maxBufferedBytes,
      ...heartbeat,
      onEnd: (why) => why !== 'closed' && x.connection.abort(),
    }));
  let answeredAsJson = false;
  const pausing = pausableAnswer(deps, x, {
    send: (message) => (stream ?? open()).send({ event: 'message', data: message }),
    write: (frame) => {
      if (answeredAsJson) return;
      if (stream === null) startStreaming(null);
      (stream ?? open()).write(frame);
    },
    // The client resumes with a GET: its leaving this connection no longer cancels the call.
    close: () => {
      x.connection.dispose();
      stream?.close();
    },
  });
  const notify = (notification: JsonRpcNotification | JsonRpcRequest) => {
    if (pausing?.emit(notification, false)) return;
    if (stream === null) startStreaming(null);
    const sse = stream ?? open();
    // A client this far behind is not reading its notifications: later ones are dropped rather than held in
    // memory without bound (an upstream may send progress without end). Server requests and answers never are.
    if (!('id' in notification) && sse.unreadBytes > NOTIFICATIONS_MAX_UNREAD_BYTES) return;
    sse.send({ event: 'message', data: notification });
  };
  // A server request an upstream sends goes out on this answer (which it switches to SSE); 2026-07-28 clients take none
  // on a stream: theirs become input_required rounds (relay/legacy-request-bridge.ts).
  const channel: ClientChannel | null = isModernVersion(x.protocolVersion)
    ? null
    : { owner: clientOwner(x.session?.claims.sid ?? null, x.principal), send: notify };
  if (x.batch) {
    const batchStream = open();
    for (const bad of x.invalid) batchStream.send({ event: 'message', data: invalidReply(bad) });
  }
  const onUpstreamPaused = pausing ? (retryMs: number) => pausing.pause(retryMs) : null;
  const work = Promise.all(
    x.requests.map((r) =>
      deps.open.track(
        r.message,
        deps.router.handle(r.message, requestContext(deps, x, r.message, notify, channel, onUpstreamPaused)),
      ),
    ),
  );
  const settled = x.batch ? null : await Promise.race([work, started]);
  if (settled !== null && stream === null) {
    answeredAsJson = true;
    x.connection.dispose();
    const answer = settled[0];
    if (!answer) return new Response(null, { status: 499 });
    return jsonResponse(
      shaped(x.requests[0]!.message.method, answer.response, x.protocolVersion),
      answer.status,
      answerHeaders(answer.response, answer.status, x.sessionHeaders),
    );
  }
  const sse: SseStream = stream ?? open();
  void work
    .then(async (answers: (McpAnswer | null)[]) => {
      for (const [i, a] of answers.entries()) {
        const message = a && shaped(x.requests[i]!.message.method, a.response, x.protocolVersion);
        if (message && !pausing?.emit(message, true)) sse.send({ event: 'message', data: message });
      }
      await pausing?.settled();
    })
    .finally(() => {
      x.connection.dispose();
      sse.close();
    });
  return sse.response(x.sessionHeaders);
}

/** Everything the method router handles one request with: the exchange's caller, revision and session, and this request's `_meta`. */
function requestContext(
  deps: RespondDeps,
  x: Exchange,
  request: JsonRpcRequest,
  notify: McpRequestContext['notify'],
  channel: ClientChannel | null,
  onUpstreamPaused: ((retryMs: number) => void) | null = null,
): McpRequestContext {
  const meta = metaOf(request.params);
  const metaToken = meta[CONFIRMATION_TOKEN_META];
  const progress = meta.progressToken;
  const { c, connection } = x;
  return {
    principal: x.principal,
    requestId: c.get('requestId') ?? 'req_unknown',
    endpoint: x.endpoint,
    protocolVersion: x.protocolVersion,
    session: x.session,
    // Made only if a call going upstream reads it; a cached tools/list never does.
    get signal() {
      return connection.signal;
    },
    callerGone: connection.abortEvents,
    notify,
    confirmationToken: requestHeader(c, 'x-confirmation-token') ?? (typeof metaToken === 'string' ? metaToken : null),
    progressToken: typeof progress === 'string' || typeof progress === 'number' ? progress : null,
    reauthenticate: () => authenticateMcpCaller(deps.auth, deps.resources, c),
    clientCapabilities: x.session
      ? (x.session.claims.caps ?? NO_CLIENT_CAPABILITIES)
      : relayableCapabilities(meta[META_CLIENT_CAPABILITIES]),
    channel,
    headers: requestHeaders(c),
    ...(onUpstreamPaused ? { onUpstreamPaused } : {}),
  };
}

/** The pause of a session answer of 2025-11-25 or later that mirrors an upstream's SEP-1699 pause; null for other answers. */
function pausableAnswer(
  deps: RespondDeps,
  x: Exchange,
  live: ConstructorParameters<typeof PausableAnswer>[2],
): PausableAnswer | null {
  const sid = x.session?.claims.sid ?? null;
  return pausable(x.protocolVersion, sid, x.batch) ? new PausableAnswer(deps.resumption, sid, live) : null;
}

/** A result shaped for the client's revision (errors go as they are). */
const shaped = (method: string, response: JsonRpcResponse, protocolVersion: string): JsonRpcResponse =>
  'result' in response ? { ...response, result: resultForClient(method, response.result, protocolVersion) } : response;

const invalidReply = (bad: Invalid): JsonRpcResponse => rpcError(bad.id, bad.code, bad.message);
