import { afterEach, describe, expect, it } from 'vitest';
import { replyJson, replySse, startRecordingUpstream, type RecordingUpstream } from './index.js';

let upstream: RecordingUpstream | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

describe('startRecordingUpstream', () => {
  it('records method, path, headers and JSON body and echoes by default', async () => {
    upstream = await startRecordingUpstream();
    const res = await fetch(`${upstream.url}/run?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user-id': 'u-7' },
      body: JSON.stringify({ message: 'hi' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, method: 'POST', path: '/run?x=1', body: { message: 'hi' } });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]).toMatchObject({ method: 'POST', path: '/run?x=1', body: { message: 'hi' } });
    expect(upstream.requests[0]?.headers['x-user-id']).toBe('u-7');
  });

  it('lets the handler reply with a status and JSON, or stream SSE', async () => {
    upstream = await startRecordingUpstream(async (req, res) => {
      if (req.path === '/fail') return replyJson(res, 418, { nope: true });
      await replySse(res, [{ event: 'token', data: { t: 'a' } }, { data: 'done' }], 5);
    });
    const failed = await fetch(`${upstream.url}/fail`);
    expect(failed.status).toBe(418);
    expect(await failed.json()).toEqual({ nope: true });

    const stream = await fetch(`${upstream.url}/stream`, { method: 'POST', body: 'plain text' });
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    expect(await stream.text()).toBe('event: token\ndata: {"t":"a"}\n\ndata: done\n\n');
    expect(upstream.requests[1]?.body).toBe('plain text');
  });
});
