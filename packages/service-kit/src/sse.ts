/** One server-sent event: `data` goes out as a single line of JSON; `event` and `id` when given. */
export interface SseEvent {
  event?: string;
  id?: string;
  data: unknown;
}

/** Why a stream ended: closed by the server, the client went away, or the client stopped reading. */
export type SseEnd = 'closed' | 'client-gone' | 'too-slow';

/** Headers of every event stream: never cached or transformed on the way, never buffered by nginx. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
});

/** What a client may leave unread before its stream is cut off (a stalled reader must not grow memory). */
export const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024;

const encoder = new TextEncoder();
const LINE_BREAK = /[\r\n]/;

/**
 * The one SSE framing: `event:`, `id:`, then one `data:` line of JSON (JSON.stringify never
 * writes a raw line break) and the blank line. An event name or id with a line break would
 * forge further fields, so it throws.
 */
export function sseText({ event, id, data }: SseEvent): string {
  if ((event !== undefined && LINE_BREAK.test(event)) || (id !== undefined && LINE_BREAK.test(id)))
    throw new Error('SSE event and id must be one line');
  return `${event === undefined ? '' : `event: ${event}\n`}${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/** `sseText` as bytes: frame once, write to many streams (a broadcast). */
export const sseFrame = (event: SseEvent): Uint8Array => encoder.encode(sseText(event));

/** A comment: clients ignore it; it keeps idle proxies and load balancers from closing the stream. */
export const sseComment = (text: string): Uint8Array => encoder.encode(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);

const KEEP_ALIVE = sseComment('keep-alive');
/** Bytes the body queues before it reports itself full (the socket takes them as it drains). */
const QUEUE_HIGH_WATER_MARK = 16 * 1024;

export interface SseStreamOptions {
  /** A `: keep-alive` comment this often; none when absent. */
  heartbeatMs?: number;
  /** Unread bytes past which the client is cut off (`too-slow`); default 256 KiB. Infinity for a stream whose writes are bounded anyway. */
  maxBufferedBytes?: number;
  /** The client's connection (the request's signal, or `clientGoneSignal(c).signal`): its abort ends the stream. */
  signal?: AbortSignal;
  /** Called once when the stream ends, however it ended. */
  onEnd?: (why: SseEnd) => void;
}

/**
 * The one SSE writer: frames events, queues them on a byte-counted web stream (which
 * `@hono/node-server` writes to the socket as it drains), sends heartbeats, cuts off a client
 * that stops reading, and ends once whichever comes first: `close()`, the client cancelling the
 * body (the adapter cancels it when the socket closes), or `signal` aborting.
 */
export class SseStream {
  /** The response body; hand it to `response()` or `c.body()`. */
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private ended = false;
  private readonly heartbeat: NodeJS.Timeout | undefined;
  private readonly maxBufferedBytes: number;
  private readonly clientGone = () => this.finish('client-gone');

  constructor(private readonly options: SseStreamOptions = {}) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    this.body = new ReadableStream<Uint8Array>(
      { start: (controller) => void (this.controller = controller), cancel: this.clientGone },
      new ByteLengthQueuingStrategy({ highWaterMark: QUEUE_HIGH_WATER_MARK }),
    );
    if (options.heartbeatMs !== undefined) {
      this.heartbeat = setInterval(() => this.write(KEEP_ALIVE), options.heartbeatMs);
      this.heartbeat.unref();
    }
    if (options.signal?.aborted) this.finish('client-gone');
    else options.signal?.addEventListener('abort', this.clientGone, { once: true });
  }

  /** Whether writes still go anywhere. */
  get open(): boolean {
    return !this.ended;
  }

  /** Bytes queued that the client has not taken yet: what a writer of droppable events reads to skip them. */
  get unreadBytes(): number {
    const { desiredSize } = this.controller;
    return desiredSize === null ? 0 : Math.max(0, QUEUE_HIGH_WATER_MARK - desiredSize);
  }

  /** Frames and queues one event; false once the stream has ended. */
  send(event: SseEvent): boolean {
    return this.write(sseFrame(event));
  }

  /** Queues bytes already framed (`sseFrame`, `sseComment`); cuts the client off past `maxBufferedBytes` unread. */
  write(frame: Uint8Array): boolean {
    if (this.ended) return false;
    const { desiredSize } = this.controller;
    if (desiredSize !== null && desiredSize < -this.maxBufferedBytes) {
      this.finish('too-slow');
      this.controller.error(new Error('SSE client too slow: stream cut off'));
      return false;
    }
    try {
      this.controller.enqueue(frame);
      return true;
    } catch {
      this.finish('client-gone');
      return false;
    }
  }

  /** Ends the stream from the server's side: the client sees the end of the response. */
  close(): void {
    if (this.ended) return;
    this.finish('closed');
    try {
      this.controller.close();
    } catch {
      // Already cancelled by its reader.
    }
  }

  /** The streaming answer, with the SSE headers and `headers` (a session id, …). */
  response(headers?: Record<string, string>): Response {
    return new Response(this.body, { status: 200, headers: headers ? { ...SSE_HEADERS, ...headers } : SSE_HEADERS });
  }

  private finish(why: SseEnd): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    this.options.signal?.removeEventListener('abort', this.clientGone);
    this.options.onEnd?.(why);
  }
}
