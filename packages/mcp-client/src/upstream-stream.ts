import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Deadline } from './deadline.js';
import { McpUpstreamError } from './errors.js';
import { postOver, type HttpAnswer } from './http-exchange.js';
import { parseJsonLines } from './json-lines.js';
import { isJsonRpcResponse, MODERN_PROTOCOL_VERSION, type JsonRpcResponse } from './protocol.js';
import { parseSse, type SseEvent } from './sse.js';
import type { UpstreamSession, UpstreamTarget } from './upstream-call.js';

/** How many times one answer stream is resumed (GET + Last-Event-ID) before the call fails; the deadline bounds it too. */
export const MAX_STREAM_RESUMPTIONS = 50;
/** The wait before resuming a stream whose upstream gave no `retry`. */
export const DEFAULT_RESUME_DELAY_MS = 1_000;

/** Where an answer stream is read from and what it hands on: a resumption (GET + Last-Event-ID) goes to the same endpoint, session and headers. */
export interface AnswerStream {
  dispatcher: Dispatcher;
  /** The endpoint as undici's origin and path. */
  endpoint: { origin: string; path: string };
  target: UpstreamTarget;
  session: UpstreamSession;
  deadline: Deadline;
  /** The most bytes read over the stream and all its resumptions. */
  maxBytes: number;
  framing: 'sse' | 'json-lines';
  /** Every message that is not the response (notifications, server requests), in order. */
  handOn: (message: unknown) => void;
  onStreamPaused: ((retryMs: number) => void) | undefined;
}

/** Where a stream resumes from, and how much of it has been read. */
interface StreamCursor {
  lastEventId: string | null;
  retryMs: number;
  bytes: number;
}

/**
 * Reads a streamed answer until the response to `id` arrives: a proxy relays progress as it
 * comes. On a session revision a stream that ends without it but gave an event id (SEP-1699
 * polling: a priming event, then the upstream closes) is resumed as a client does: after its
 * `retry` (else DEFAULT_RESUME_DELAY_MS), a GET with `Last-Event-ID`, read on; at most
 * MAX_STREAM_RESUMPTIONS times, within the deadline. The size cap counts every byte read over all of them.
 */
export async function readAnswerStream(first: Readable, id: number, stream: AnswerStream): Promise<JsonRpcResponse> {
  const cursor: StreamCursor = { lastEventId: null, retryMs: DEFAULT_RESUME_DELAY_MS, bytes: 0 };
  let body = first;
  for (let resumed = 0; ; resumed++) {
    const response = await readEvents(body, id, stream, cursor);
    if (response) return response;
    // Only a session revision's stream with an event id can be resumed.
    const resumeFrom = stream.session.protocolVersion === MODERN_PROTOCOL_VERSION ? null : cursor.lastEventId;
    if (resumeFrom === null || resumed >= MAX_STREAM_RESUMPTIONS)
      throw new McpUpstreamError('protocol', 'upstream stream ended without a response');
    stream.onStreamPaused?.(cursor.retryMs);
    await pause(cursor.retryMs, stream.deadline);
    body = await resumeStream(stream, resumeFrom);
  }
}

/** One connection's events: other messages handed on, the cursor kept; the response when it comes, else null at its end. */
async function readEvents(
  body: Readable,
  id: number,
  stream: AnswerStream,
  cursor: StreamCursor,
): Promise<JsonRpcResponse | null> {
  const chunks = capped(body, cursor, stream.maxBytes);
  const messages = stream.framing === 'sse' ? sseMessages(chunks, cursor) : parseJsonLines(chunks);
  for await (const message of messages) {
    if (isJsonRpcResponse(message) && message.id === id) {
      body.destroy();
      return message;
    }
    stream.handOn(message);
  }
  return null;
}

/** A body's chunks, counted into the cursor; past `maxBytes` (over every resumption) a `too_large` failure. */
async function* capped(body: Readable, cursor: StreamCursor, maxBytes: number): AsyncGenerator<Buffer> {
  for await (const chunk of body as AsyncIterable<Buffer>) {
    cursor.bytes += chunk.length;
    if (cursor.bytes > maxBytes) throw new McpUpstreamError('too_large', `upstream stream exceeds ${maxBytes} bytes`);
    yield chunk;
  }
}

/** The GET that resumes a session's stream after `lastEventId`; anything but an SSE answer fails the call. */
async function resumeStream(stream: AnswerStream, lastEventId: string): Promise<Readable> {
  const { target, session } = stream;
  const headers: string[] = [];
  for (const [name, value] of Object.entries(target.headers ?? {})) headers.push(name, value);
  headers.push(
    'accept',
    'text/event-stream',
    'mcp-protocol-version',
    session.protocolVersion,
    'last-event-id',
    lastEventId,
  );
  if (session.sessionId !== null) headers.push('mcp-session-id', session.sessionId);
  const get = { ...stream.endpoint, headers, body: null };
  const answer: HttpAnswer = await postOver(stream.dispatcher, get, stream.deadline, {
    wantBody: true,
    maxBytes: stream.maxBytes,
  });
  if (answer.status === 200 && answer.body instanceof Readable) return answer.body;
  throw new McpUpstreamError('protocol', `upstream did not resume its stream (HTTP ${answer.status})`);
}

/** The JSON texts of an SSE stream's message events, its resumption cursor kept as they pass. */
async function* sseMessages(chunks: AsyncIterable<Buffer>, cursor: StreamCursor): AsyncGenerator<unknown> {
  for await (const event of parseSse(chunks)) {
    takeCursor(cursor, event);
    if (event.event !== 'message' || event.data === '') continue;
    try {
      yield JSON.parse(event.data) as unknown;
    } catch {
      // An event that is not JSON carries no message.
    }
  }
}

/** Keeps the resumption cursor of a stream: the last event id and the reconnection delay it asked for. */
function takeCursor(cursor: StreamCursor, event: SseEvent): void {
  if (event.id !== null) cursor.lastEventId = event.id;
  if (event.retry !== null) cursor.retryMs = event.retry;
}

/** Waits `ms`, or fails when the call's deadline ends first. */
function pause(ms: number, deadline: Deadline): Promise<void> {
  return new Promise((resolve, reject) => {
    let stop = (): void => undefined;
    const timer = setTimeout(() => {
      stop();
      resolve();
    }, ms);
    stop = deadline.onEnd((err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
