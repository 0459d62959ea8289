import { describe, expect, it } from 'vitest';
import { McpUpstreamError } from './errors.js';
import { closedAfterEachTest, sseHead, sseMessage } from './legacy-stream-upstream.fixtures.js';
import { MAX_STREAM_RESUMPTIONS } from './upstream-stream.js';

const { newClient, start } = closedAfterEachTest();

describe('SEP-1699 stream polling: resuming an answer stream the upstream closed', () => {
  it('waits the retry, resumes with GET + Last-Event-ID on the session, and reads the response there', async () => {
    const upstream = await start((req, res, body) => {
      sseHead(res);
      if (req.method === 'POST') {
        // The priming event (an id, empty data, a retry), then the connection closes without the response.
        res.end(
          `id: call-7:0\nretry: 40\ndata:\n\n${sseMessage({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } }, 'call-7:1')}`,
        );
        pending = body!.id as number;
        return;
      }
      res.end(
        sseMessage({ jsonrpc: '2.0', id: pending, result: { content: [{ type: 'text', text: 'done' }] } }, 'call-7:2'),
      );
    });
    let pending = 0;
    const client = newClient();
    const notes: unknown[] = [];
    const { response } = await client.request(
      { endpoint: upstream.url, headers: { authorization: 'Bearer k' } },
      'tools/call',
      { name: 't' },
      { onNotification: (n) => notes.push(n.params?.data) },
    );
    expect(response).toEqual({ jsonrpc: '2.0', id: pending, result: { content: [{ type: 'text', text: 'done' }] } });
    expect(notes).toEqual(['working']);
    const get = upstream.seen.find((r) => r.method === 'GET')!;
    expect(get.headers).toMatchObject({
      'last-event-id': 'call-7:1',
      'mcp-session-id': 's-1',
      'mcp-protocol-version': '2025-11-25',
      accept: 'text/event-stream',
      authorization: 'Bearer k',
    });
  });

  it('keeps polling while the upstream answers each GET with a new priming event and closes', async () => {
    let gets = 0;
    let pending = 0;
    const upstream = await start((req, res, body) => {
      sseHead(res);
      if (req.method === 'POST') {
        pending = body!.id as number;
        return void res.end('id: e0\nretry: 5\ndata:\n\n');
      }
      gets++;
      if (gets < 3) return void res.end(`id: e${gets}\ndata:\n\n`);
      res.end(sseMessage({ jsonrpc: '2.0', id: pending, result: { ok: gets } }));
    });
    const { response } = await newClient().request({ endpoint: upstream.url }, 'tools/call', { name: 't' });
    expect(response).toMatchObject({ result: { ok: 3 } });
    expect(upstream.seen.filter((r) => r.method === 'GET').map((r) => r.headers['last-event-id'])).toEqual([
      'e0',
      'e1',
      'e2',
    ]);
  });

  it('fails a call whose stream ended without a response or an event id, or whose upstream will not resume, or past the deadline', async () => {
    const noCursor = await start((_req, res) => {
      sseHead(res);
      res.end(': nothing\n\n');
    });
    await expect(newClient().request({ endpoint: noCursor.url }, 'tools/call', { name: 't' })).rejects.toMatchObject({
      kind: 'protocol',
      message: 'upstream stream ended without a response',
    });
    expect(noCursor.seen.some((r) => r.method === 'GET')).toBe(false);

    const refuses = await start((req, res) => {
      if (req.method === 'GET') return void res.writeHead(405).end();
      sseHead(res);
      res.end('id: x\nretry: 1\ndata:\n\n');
    });
    await expect(newClient().request({ endpoint: refuses.url }, 'tools/call', { name: 't' })).rejects.toMatchObject({
      kind: 'protocol',
      message: 'upstream did not resume its stream (HTTP 405)',
    });

    const slow = await start((_req, res) => {
      sseHead(res);
      res.end('id: x\nretry: 60000\ndata:\n\n');
    });
    const err = await newClient()
      .request({ endpoint: slow.url }, 'tools/call', { name: 't' }, { timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUpstreamError);
    expect((err as McpUpstreamError).kind).toBe('timeout');
    expect(slow.seen.some((r) => r.method === 'GET')).toBe(false);
  });

  it(`gives up after ${MAX_STREAM_RESUMPTIONS} resumptions that never bring the response`, async () => {
    const endless = await start((_req, res) => {
      sseHead(res);
      res.end('id: again\nretry: 0\ndata:\n\n');
    });
    await expect(newClient().request({ endpoint: endless.url }, 'tools/call', { name: 't' })).rejects.toMatchObject({
      kind: 'protocol',
    });
    expect(endless.seen.filter((r) => r.method === 'GET')).toHaveLength(MAX_STREAM_RESUMPTIONS);
  });
});
