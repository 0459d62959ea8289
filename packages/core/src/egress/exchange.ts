import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

/** One request, in undici's terms: the endpoint already split into origin and path. */
export interface ExchangeRequest {
  origin: string;
  path: string;
  method: 'GET' | 'POST';
  /** undici's flat name/value list, or a record. */
  headers: string[] | Record<string, string>;
  body: string | null;
  /** undici's own timers: the wait for the head, and the longest silence inside the body. */
  headersTimeout?: number;
  bodyTimeout?: number;
}

/** How an answer's body is taken: relayed as it arrives, collected whole (bounded), or read and dropped. */
export type BodyMode = 'stream' | 'collect' | 'discard';

/** Why each caller's exchange differs: how a body is taken, what is too large, who may abort, how a failure is named. */
export interface ExchangeOptions {
  /** Largest body collected whole; past it the exchange aborts with `tooLarge(maxBytes)`. */
  maxBytes: number;
  tooLarge: (maxBytes: number) => Error;
  /** Chosen at the response head. */
  bodyMode: (status: number, headers: IncomingHttpHeaders) => BodyMode;
  /** Given the request's abort once it starts (a deadline, a caller going away); returns what stops watching, called once the answer is complete or failed. */
  watch?: (abort: (err: Error) => void) => () => void;
  /** Names a failure; `afterHead` tells a connection that failed from an answer that broke off. The raw error by default. */
  failure?: (err: unknown, afterHead: boolean) => unknown;
}

/** What the other side answered: its head, and its body collected (null when dropped) or as a live stream. */
export type Exchanged =
  | { kind: 'whole'; status: number; headers: IncomingHttpHeaders; body: Buffer | null }
  | { kind: 'stream'; status: number; headers: IncomingHttpHeaders; body: Readable };

/**
 * One HTTP exchange through undici's dispatch handler API rather than `request()`: a collected
 * answer costs no body stream, async iterator or promise per chunk; a streamed one is a Node
 * Readable the other side is paused behind while 16 KB lie unread. Resolves at the head for a
 * stream, at the end otherwise. undici's empty chunks (one on each resume) are dropped: handed to
 * a reader, they answered its reads with nothing and a relay spun.
 */
export function exchange(
  dispatcher: Dispatcher,
  request: ExchangeRequest,
  options: ExchangeOptions,
): Promise<Exchanged> {
  return new Promise((resolve, reject) => {
    const handler = new ExchangeHandler(options, resolve, reject);
    try {
      dispatcher.dispatch(request, handler);
    } catch (err) {
      // An argument undici refuses before sending (a header it cannot write) fails like any exchange.
      handler.fail(err);
    }
  });
}

/** One exchange's state and undici's callbacks on it: one object per exchange rather than a closure per callback. */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  private stopWatching: () => void = noop;
  private head: { status: number; headers: IncomingHttpHeaders } | null = null;
  private chunks: Buffer[] | null = null;
  private stream: Readable | null = null;
  private ended = false;
  private size = 0;

  constructor(
    private readonly options: ExchangeOptions,
    private readonly resolve: (answer: Exchanged) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  fail(err: unknown): void {
    this.stopWatching();
    if (this.stream) this.stream.destroy(err instanceof Error ? err : new Error(String(err)));
    else this.reject(this.options.failure ? this.options.failure(err, this.head !== null) : err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.options.watch) this.stopWatching = this.options.watch((err) => controller.abort(err));
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    this.head = { status, headers };
    const mode = this.options.bodyMode(status, headers);
    if (mode === 'collect') this.chunks = [];
    if (mode !== 'stream') return;
    const stream = new Readable({
      read: () => controller.resume(),
      destroy: (err, done) => {
        if (!controller.aborted && !this.ended) controller.abort(err ?? new Error('the stream was closed'));
        done(err);
      },
    });
    // The reader reports failures; until it reads, an error must not go unhandled.
    stream.on('error', noop);
    this.stream = stream;
    this.resolve({ kind: 'stream', status, headers, body: stream });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.stream) {
      if (!this.stream.push(chunk)) controller.pause();
      return;
    }
    if (!this.chunks) return;
    this.size += chunk.length;
    if (this.size > this.options.maxBytes) controller.abort(this.options.tooLarge(this.options.maxBytes));
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.ended = true;
    this.stopWatching();
    if (this.stream) return void this.stream.push(null);
    const { head, chunks } = this;
    if (head === null) return this.fail(new Error('the answer ended before its head'));
    // One chunk is the body as it is (no copy).
    const body = chunks ? ((chunks.length === 1 ? chunks[0] : undefined) ?? Buffer.concat(chunks, this.size)) : null;
    this.resolve({ kind: 'whole', status: head.status, headers: head.headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }
}

const noop = (): void => undefined;

/**
 * URLs split into undici's origin and path, kept per URL text: a hot path calls the same few
 * endpoints again and again and need not parse them each time. Bounded (cleared when full), so a
 * misuse cannot grow it.
 */
export class EndpointSplits {
  private readonly splits = new Map<string, { origin: string; path: string }>();

  constructor(private readonly max = 1_000) {}

  /** The URL's origin and path (with its query); throws on a URL that does not parse, like `new URL`. */
  of(url: string): { origin: string; path: string } {
    let split = this.splits.get(url);
    if (!split) {
      const parsed = new URL(url);
      split = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (this.splits.size >= this.max) this.splits.clear();
      this.splits.set(url, split);
    }
    return split;
  }
}
