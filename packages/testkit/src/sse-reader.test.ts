import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { SseEventReader } from './sse-reader.js';

describe('SseEventReader', () => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': keep-alive\n\nevent: connected\ndata: {"userId":"u1"}\n\n');
    res.write('event: heartbeat\ndata: \n\nevent: CONF');
    setTimeout(() => res.end('IRMATION_REQUIRED\nid: 7\ndata: {"id":"c1",\ndata: "n":2}\n\ndata: plain text\n\n'), 20);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('parses events split across chunks, skips comments and other names, and reports the end', async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const reader = new SseEventReader(await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`));
    expect(await reader.next()).toEqual({ event: 'connected', id: null, data: { userId: 'u1' } });
    expect(await reader.nextOf('CONFIRMATION_REQUIRED', 2_000, (d) => (d as { n: number }).n === 2)).toEqual({
      event: 'CONFIRMATION_REQUIRED',
      id: '7',
      data: { id: 'c1', n: 2 },
    });
    expect(await reader.next()).toEqual({ event: 'message', id: null, data: 'plain text' });
    expect(await reader.next()).toBeNull();
    await expect(reader.nextOf('never')).rejects.toThrow(/stream ended before never/);
  });
});
