import {
  createEgressDispatcher,
  egressRefusalOf,
  UpstreamError,
  UpstreamTimeoutError,
  type AppError,
  type EgressPolicy,
  type Logger,
} from '@agentgw/core';
import type { ClientGone } from '@agentgw/service-kit';
import { Readable } from 'node:stream';
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
   * Sent through undici's dispatch handler API rather than `request()`: a JSON answer is collected
   * as it arrives (no body stream, async iterator or promise per chunk); an event stream is a Node
   * Readable the upstream is paused behind while it holds 16 KB unread, handed on as a web stream.
   * (Fed straight into a web stream, undici's empty chunk on each resume answered the reader's
   * reads with nothing: a busy loop. `invoke.test.ts` "holds back an SSE upstream" catches it.)
   */
  post(
    url: string,
    init: { headers: Record<string, string>; body: string; signal: ClientGone; log: () => Logger },
  ): Promise<UpstreamAnswer> {
    const { signal, log } = init;
    const target = new URL(url);
    return new Promise((resolve, reject) => {
      let abort: ((err: Error) => void) | undefined;
      const stopWatching = onClientGone(signal, () => abort?.(new Error('the client went away')));
      let chunks: Buffer[] | null = null;
      let size = 0;
      let ended = false;
      let head: { status: number; contentType: string } | undefined;
      let stream: Readable | undefined;
      const maxBytes = this.limits.maxResponseBytes;
      const failed = (err: unknown) => {
        stopWatching();
        reject(upstreamFailure(err, signal, log));
      };
      try {
        this.dispatcher.dispatch(
          {
            origin: target.origin,
            path: `${target.pathname}${target.search}`,
            method: 'POST',
            headers: init.headers,
            body: init.body,
            headersTimeout: this.limits.headersTimeoutMs,
            bodyTimeout: this.limits.bodyTimeoutMs,
          },
          {
            onRequestStart(controller) {
              abort = (err) => controller.abort(err);
              if (signal.aborted) controller.abort(new Error('the client went away'));
            },
            onResponseStart(controller, status, headers) {
              const contentType = String(headers['content-type'] ?? '');
              head = { status, contentType };
              // 204/205/304 carry no body whatever their content type says; they are wrapped like any answer.
              if (/^text\/event-stream\b/i.test(contentType) && ![204, 205, 304].includes(status)) {
                stream = new Readable({
                  read: () => controller.resume(),
                  destroy: (err, done) => {
                    if (!controller.aborted && !ended) controller.abort(err ?? new Error('the client went away'));
                    done(err);
                  },
                });
                // The relay's reader reports failures; until it reads, an error must not go unhandled.
                stream.on('error', () => undefined);
                resolve({ kind: 'stream', status, contentType, body: relay(stream) });
              } else chunks = [];
            },
            onResponseData(controller, chunk) {
              if (stream) {
                if (!stream.push(chunk)) controller.pause();
                return;
              }
              size += chunk.length;
              if (size > maxBytes) controller.abort(new UpstreamError('Agent upstream answer is too large'));
              else chunks?.push(chunk);
            },
            onResponseEnd() {
              stopWatching();
              ended = true;
              if (stream) return void stream.push(null);
              resolve({ kind: 'buffered', ...head!, body: Buffer.concat(chunks ?? [], size) });
            },
            onResponseError(_controller, err) {
              if (!stream) return failed(err);
              stopWatching();
              stream.destroy(err);
            },
          },
        );
      } catch (err) {
        // An argument undici refuses before sending (a header it cannot write): a failed exchange like any other.
        failed(err);
      }
    });
  }
}

/** Calls `gone` once the client goes away; returns what stops watching (once the upstream's answer is complete). */
function onClientGone(signal: ClientGone, gone: () => void): () => void {
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
