import { request as httpRequest } from 'node:http';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SSE_HEADERS, sseComment, sseFrame, SseStream, sseText, type SseEnd } from './sse.js';
import { listening, type Transport } from './testing.js';

const decoder = new TextDecoder();

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  return text;
}

let open: Transport | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await open?.close();
  open = undefined;
});

describe('sseText / sseFrame / sseComment', () => {
  it('frames event, id and one data line of JSON, in that order, each only when given', () => {
    expect(sseText({ event: 'message', id: '7', data: { a: 'x\ny' } })).toBe(
      'event: message\nid: 7\ndata: {"a":"x\\ny"}\n\n',
    );
    expect(sseText({ data: 1 })).toBe('data: 1\n\n');
    expect(decoder.decode(sseFrame({ event: 'e', data: null }))).toBe('event: e\ndata: null\n\n');
    expect(decoder.decode(sseComment('keep\nalive'))).toBe(': keep alive\n\n');
  });

  it('refuses an event name or id that would forge fields', () => {
    expect(() => sseText({ event: 'x\ndata: forged', data: 1 })).toThrow(/one line/);
    expect(() => sseText({ id: '1\r', data: 1 })).toThrow(/one line/);
  });
});

describe('SseStream', () => {
  it('streams what is sent until close, then ends once with "closed"', async () => {
    const ends: SseEnd[] = [];
    const stream = new SseStream({ onEnd: (why) => ends.push(why) });
    stream.send({ event: 'message', data: { n: 1 } });
    stream.write(sseComment('hello'));
    stream.close();
    stream.close();
    expect(stream.send({ data: 'late' })).toBe(false);
    expect(await readAll(stream.body)).toBe('event: message\ndata: {"n":1}\n\n: hello\n\n');
    expect(ends).toEqual(['closed']);
  });

  it('sends a keep-alive comment every heartbeatMs, and stops with the stream', async () => {
    vi.useFakeTimers();
    const stream = new SseStream({ heartbeatMs: 1_000 });
    vi.advanceTimersByTime(2_500);
    stream.close();
    vi.advanceTimersByTime(5_000);
    expect(await readAll(stream.body)).toBe(': keep-alive\n\n: keep-alive\n\n');
  });

  it('cuts off a client that leaves more than maxBufferedBytes unread ("too-slow"), and a reader sees the error', async () => {
    const ends: SseEnd[] = [];
    const stream = new SseStream({ maxBufferedBytes: 4_096, onEnd: (why) => ends.push(why) });
    let accepted = 0;
    for (let i = 0; i < 100; i++) if (stream.send({ data: 'x'.repeat(500) })) accepted++;
    expect(accepted).toBeLessThan(100);
    expect(accepted * 500).toBeGreaterThan(16 * 1024);
    expect(ends).toEqual(['too-slow']);
    await expect(stream.body.getReader().read()).rejects.toThrow(/too slow/);
  });

  it('never cuts off a stream whose writes are bounded anyway (maxBufferedBytes: Infinity)', () => {
    const stream = new SseStream({ maxBufferedBytes: Infinity });
    for (let i = 0; i < 100; i++) expect(stream.send({ data: 'x'.repeat(10_000) })).toBe(true);
    stream.close();
  });

  it('counts the bytes the client has not taken (unreadBytes), falling as it reads', async () => {
    const stream = new SseStream({ maxBufferedBytes: Infinity });
    expect(stream.unreadBytes).toBe(0);
    const frame = sseFrame({ data: 'x'.repeat(10_000) });
    for (let i = 0; i < 5; i++) stream.write(frame);
    expect(stream.unreadBytes).toBe(5 * frame.length);
    const reader = stream.body.getReader();
    await reader.read();
    expect(stream.unreadBytes).toBe(4 * frame.length);
    stream.close();
  });

  it('ends with "client-gone" when the reader cancels or the signal aborts (already aborted included)', async () => {
    const cancelled: SseEnd[] = [];
    const byReader = new SseStream({ onEnd: (why) => cancelled.push(why) });
    await byReader.body.cancel();
    expect(cancelled).toEqual(['client-gone']);
    expect(byReader.open).toBe(false);

    const leaving = new AbortController();
    const aborted: SseEnd[] = [];
    new SseStream({ signal: leaving.signal, onEnd: (why) => aborted.push(why) });
    leaving.abort();
    leaving.abort();
    expect(aborted).toEqual(['client-gone']);

    const gone: SseEnd[] = [];
    new SseStream({ signal: AbortSignal.abort(), onEnd: (why) => gone.push(why) });
    expect(gone).toEqual(['client-gone']);
  });

  it('answers with the SSE headers plus the given ones', () => {
    const res = new SseStream().response({ 'mcp-session-id': 's1' });
    expect(Object.fromEntries(res.headers)).toEqual({ ...SSE_HEADERS, 'mcp-session-id': 's1' });
  });

  it('over a real socket: the client sees events as they are sent, and its leaving ends the stream', async () => {
    let ended!: (why: SseEnd) => void;
    const end = new Promise<SseEnd>((resolve) => (ended = resolve));
    const app = new Hono();
    app.get('/events', () => {
      const stream = new SseStream({ onEnd: ended });
      stream.send({ event: 'first', data: { ok: true } });
      return stream.response();
    });
    open = await listening(app);
    const port = Number(new URL((await open.request('/nowhere')).url).port);
    const first = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/events' }, (res) => {
        res.once('data', (chunk: Buffer) => {
          resolve(`${res.headers['content-type']}|${chunk.toString()}`);
          req.destroy();
        });
      });
      req.on('error', () => undefined);
      req.end();
    });
    expect(first).toBe('text/event-stream|event: first\ndata: {"ok":true}\n\n');
    expect(await end).toBe('client-gone');
  });
});
