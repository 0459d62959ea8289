import {
  createEgressDispatcher,
  egressRefusalOf,
  EndpointSplits,
  exchange,
  UpstreamError,
  UpstreamTimeoutError,
  type AppError,
  type EgressPolicy,
  type BodyMode,
  type ExchangeRequest,
  type Logger,
} from '@agentgw/core';
import type { ClientGone } from '@agentgw/service-kit';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

export interface UpstreamLimits {
  /** How long to wait for the upstream's response headers before answering 504. */
  headersTimeoutMs: number;
  /** Longest silence allowed inside a response body, SSE streams included. */
  bodyTimeoutMs: number;
  /** Largest non-streaming answer that is buffered to be wrapped; beyond it the call is a 502. */
  maxResponseBytes: number;
}

export type UpstreamAnswer =
  | { kind: 'stream'; status: number; contentType: string; body: ReadableStream<Uint8Array> }
  | { kind: 'buffered'; status: number; contentType: string; body: Buffer };

/**
 * POSTs to agents' runtimes over one keep-alive connection pool per app. Event streams are
 * relayed chunk by chunk as they arrive; anything else is read whole (bounded) so it can be
 * wrapped in the invoke envelope. Every connection goes through the egress policy (checked
 * after DNS resolution); redirects are never followed (a 3xx is answered as is).
 */
export class UpstreamClient {
  private readonly dispatcher: Dispatcher;
  private readonly endpoints = new EndpointSplits();

  constructor(
    private readonly limits: UpstreamLimits,
    egress: EgressPolicy,
  ) {
    this.dispatcher = createEgressDispatcher(egress, {
      agent: { keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 },
    });
  }

  /**
   * `signal` is the client's: a caller that goes away aborts the upstream request. `log` makes the
   * call's logger, only when a failure is logged (a child logger per call costs its bindings' serialisation).
   * Sent through `@agentgw/core`'s `exchange`: a JSON answer collected as it arrives, an event
   * stream a Node Readable the upstream is paused behind, handed on as a web stream.
   */
  async post(
    url: string,
    init: { headers: Record<string, string>; body: string; signal: ClientGone; log: () => Logger },
  ): Promise<UpstreamAnswer> {
    const { signal, log } = init;
    const { origin, path } = this.endpoints.of(url);
    const request: ExchangeRequest = {
      origin,
      path,
      method: 'POST',
      headers: init.headers,
      body: init.body,
      headersTimeout: this.limits.headersTimeoutMs,
      bodyTimeout: this.limits.bodyTimeoutMs,
    };
    const answer = await exchange(this.dispatcher, request, {
      maxBytes: this.limits.maxResponseBytes,
      tooLarge: answerTooLarge,
      bodyMode: agentBodyMode,
      watch: (abort) => onClientGone(signal, () => abort(new Error('the client went away'))),
      failure: (err) => upstreamFailure(err, signal, log),
    });
    const contentType = String(answer.headers['content-type'] ?? '');
    if (answer.kind === 'stream')
      return { kind: 'stream', status: answer.status, contentType, body: relay(answer.body) };
    return { kind: 'buffered', status: answer.status, contentType, body: answer.body ?? Buffer.alloc(0) };
  }
}

function answerTooLarge(): UpstreamError {
  return new UpstreamError('Agent upstream answer is too large');
}

/** An event stream is relayed as it arrives; anything else is collected (bounded) to be wrapped. 204/205/304 carry no body whatever their content type says. */
function agentBodyMode(status: number, headers: IncomingHttpHeaders): BodyMode {
  const eventStream = /^text\/event-stream\b/i.test(String(headers['content-type'] ?? ''));
  return eventStream && ![204, 205, 304].includes(status) ? 'stream' : 'collect';
}

/** Calls `gone` once the client goes away; returns what stops watching (once the upstream's answer is complete). */
function onClientGone(signal: ClientGone, gone: () => void): () => void {
  if (signal.aborted) {
    gone();
    return () => undefined;
  }
  if ('addEventListener' in signal) {
    signal.addEventListener('abort', gone, { once: true });
    return () => signal.removeEventListener('abort', gone);
  }
  signal.once('abort', gone);
  return () => signal.off('abort', gone);
}

/**
 * A pull-driven web stream over the upstream body: each chunk is handed on as soon as it
 * arrives (nothing waits for more data), the upstream is paused while the reader has not asked
 * for more, and cancelling it (the client went away) aborts the upstream request.
 */
function relay(body: Readable): ReadableStream<Uint8Array> {
  const chunks = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value));
      },
      cancel() {
        body.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Maps a failed upstream exchange to 403 (egress refused)/502/504; the cause is logged, never sent to the caller. */
function upstreamFailure(err: unknown, signal: ClientGone, logOf: () => Logger): AppError {
  if (err instanceof UpstreamError) return err;
  const log = logOf();
  const refused = egressRefusalOf(err);
  if (refused) {
    log.warn({ reason: refused.reason }, 'agent upstream refused by the egress policy');
    return refused;
  }
  if (signal.aborted) {
    log.debug('client went away; upstream request aborted');
    return new UpstreamError('Request aborted by the client');
  }
  const code = (err as { code?: unknown } | null)?.code;
  log.warn({ code: typeof code === 'string' ? code : undefined }, 'agent upstream failed');
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new UpstreamTimeoutError();
  }
  return new UpstreamError('Agent upstream request failed');
}
