import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedFetch } from './bounded-fetch.js';

describe('boundedFetch', () => {
  let server: Server;
  let base = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/small') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      else if (req.url === '/declared') res.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000));
      else if (req.url === '/streamed') {
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < 10; i++) res.write('y'.repeat(600));
        res.end();
      } else res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const bounded = boundedFetch(fetch, 1024);

  it('passes a small answer through with its status and headers', async () => {
    const res = await bounded(`${base}/small`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ ok: true });
    expect((await bounded(`${base}/empty`)).status).toBe(204);
  });

  it('refuses an answer declared or streamed beyond the bound', async () => {
    await expect(bounded(`${base}/declared`)).rejects.toThrow('exceeds 1024 bytes');
    await expect(bounded(`${base}/streamed`)).rejects.toThrow('exceeds 1024 bytes');
  });
});
