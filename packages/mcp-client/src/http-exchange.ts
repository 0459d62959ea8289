import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Deadline } from './deadline.js';
import { McpUpstreamError } from './errors.js';

/** What the upstream answered: the status, the headers the client reads, and the body (bytes, or a stream for SSE). */
export interface HttpAnswer {
  status: number;
  sessionId: string | null;
  /** Buffered JSON (or other) bytes; a live stream for text/event-stream (or any answer, with `streamJson`); null when the body was not wanted. */
  body: Buffer | Readable | null;
  /** How a live stream is framed: SSE events, or newline-delimited JSON (a streamed `application/json` answer). */
  framing: 'sse' | 'json-lines';
}

/** One POST (or the GET that resumes a stream): the endpoint split once, the headers as undici's flat name/value list, the JSON text. */
export interface HttpPost {
  origin: string;
  path: string;
  headers: string[];
  /** The JSON text of a POST; null for a GET. */
  body: string | null;
}

/**
 * Sends one POST (a GET when `body` is null) through undici's dispatcher handler API rather than `request()`: no body
 * stream, async iterator or AbortSignal per call for a JSON answer (its bytes are collected
 * under `maxBytes`), a Readable only for an SSE answer. The deadline aborts it. Resolves at the
 * response head for SSE, at its end otherwise. A failure before the head is `unreachable` (with
 * the connect error as cause); after it, the raw error (the caller's deadline translates it).
 */
export function postOver(
  dispatcher: Dispatcher,
  post: HttpPost,
  deadline: Deadline,
  options: { wantBody: boolean; maxBytes: number; streamJson?: boolean },
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    let abort: ((err: Error) => void) | null = null;
    let release = () => undefined as void;
    let answer: HttpAnswer | null = null;
    let stream: Readable | null = null;
    let chunks: Buffer[] | null = null;
    let size = 0;
    const fail = (err: Error) => {
      release();
      if (stream) stream.destroy(err);
      else if (answer || deadline.reason || err instanceof McpUpstreamError) reject(err);
      else {
        const code = connectCode(err);
        reject(new McpUpstreamError('unreachable', `could not reach the upstream (${code})`, undefined, code, err));
      }
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        abort = (err) => controller.abort(err);
        release = deadline.onEnd(abort);
      },
      onResponseStart(controller, statusCode, headers) {
        const session = headers['mcp-session-id'];
        const sse = String(headers['content-type'] ?? '').includes('text/event-stream');
        const framing = sse ? 'sse' : 'json-lines';
        answer = { status: statusCode, sessionId: typeof session === 'string' ? session : null, body: null, framing };
        if (!options.wantBody || statusCode === 202) return;
        // An open-ended answer (subscriptions/listen) is read as it comes whatever its type: it may never end.
        if (sse || (options.streamJson === true && statusCode === 200)) {
          stream = new Readable({
            read: () => controller.resume(),
            destroy: (err, done) => {
              if (!controller.aborted && answer) abort?.(err ?? new Error('stream closed'));
              done(err);
            },
          });
          // The reader's iterator reports failures; until it attaches, an error must not go unhandled.
          stream.on('error', () => undefined);
          answer.body = stream;
          resolve(answer);
          return;
        }
        chunks = [];
      },
      onResponseData(controller, chunk) {
        if (stream) {
          if (!stream.push(chunk)) controller.pause();
          return;
        }
        if (!chunks) return;
        size += chunk.length;
        if (size > options.maxBytes) {
          controller.abort(new McpUpstreamError('too_large', `upstream response exceeds ${options.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      },
      onResponseEnd() {
        release();
        if (stream) {
          stream.push(null);
          return;
        }
        if (answer === null) {
          fail(new McpUpstreamError('protocol', 'upstream response ended before its headers'));
          return;
        }
        // One chunk is the body as it is (no copy).
        if (chunks) answer.body = (chunks.length === 1 ? chunks[0] : undefined) ?? Buffer.concat(chunks, size);
        resolve(answer);
      },
      onResponseError(_controller, err) {
        fail(err);
      },
    };
    dispatcher.dispatch(
      {
        origin: post.origin,
        path: post.path,
        method: post.body === null ? 'GET' : 'POST',
        headers: post.headers,
        body: post.body,
      },
      handler,
    );
  });
}

function connectCode(err: unknown): string {
  const code =
    (err as { code?: unknown; cause?: { code?: unknown } } | null)?.code ??
    (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === 'string' ? code : 'connection failed';
}
