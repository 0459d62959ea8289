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
import { request, type Dispatcher } from 'undici';

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
   */
  async post(
    url: string,
    init: { headers: Record<string, string>; body: string; signal: ClientGone; log: () => Logger },
  ): Promise<UpstreamAnswer> {
    const { headers, body, signal, log } = init;
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: 'POST',
        dispatcher: this.dispatcher,
        headers,
        body,
        signal,
        headersTimeout: this.limits.headersTimeoutMs,
        bodyTimeout: this.limits.bodyTimeoutMs,
      });
    } catch (err) {
      throw upstreamFailure(err, signal, log);
    }
    const contentType = String(response.headers['content-type'] ?? '');
    // 204/205/304 carry no body whatever their content type says; they are wrapped like any answer.
    if (/^text\/event-stream\b/i.test(contentType) && ![204, 205, 304].includes(response.statusCode)) {
      return { kind: 'stream', status: response.statusCode, contentType, body: relay(response.body) };
    }
    return {
      kind: 'buffered',
      status: response.statusCode,
      contentType,
      body: await this.readBounded(response.body, signal, log),
    };
  }

  private async readBounded(
    body: Dispatcher.ResponseData['body'],
    signal: ClientGone,
    log: () => Logger,
  ): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > this.limits.maxResponseBytes) {
          body.destroy();
          throw new UpstreamError('Agent upstream answer is too large');
        }
        chunks.push(chunk);
      }
    } catch (err) {
      throw upstreamFailure(err, signal, log);
    }
    return Buffer.concat(chunks);
  }
}

/**
 * A pull-driven web stream over the upstream body: each chunk is handed on as soon as it
 * arrives (nothing waits for more data), and cancelling it — the client went away — destroys
 * the upstream body, which closes the upstream request.
 */
function relay(body: Dispatcher.ResponseData['body']): ReadableStream<Uint8Array> {
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
