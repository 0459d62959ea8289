import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequentialLoad } from './sequential-load.js';

describe('sequentialLoad', () => {
  // Every third call answers 503; each request's body and headers are kept to check what was sent.
  let calls = 0;
  const seen: { body: string; token: string | undefined; inFlight: number }[] = [];
  let inFlight = 0;
  const server = createServer((req, res) => {
    inFlight += 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      calls += 1;
      if (seen.length < 10)
        seen.push({ body: Buffer.concat(chunks).toString('utf8'), token: req.headers['x-token'] as string, inFlight });
      inFlight -= 1;
      res.writeHead(calls % 3 === 0 ? 503 : 200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  let url = '';
  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc?x=1`;
  });
  afterAll(() => server.close());

  it('sends one call at a time, counts non-2xx answers and reports sub-millisecond percentiles', async () => {
    const result = await sequentialLoad(url, 0.5, { 'x-token': 't1', 'content-type': 'application/json' }, '{"a":1}');
    expect(result.total).toBe(calls);
    expect(result.total).toBeGreaterThan(10);
    expect(result.non2xx).toBe(Math.floor(calls / 3));
    expect(result.errors).toBe(0);
    expect(seen.every((s) => s.body === '{"a":1}' && s.token === 't1' && s.inFlight === 1)).toBe(true);
    // Loopback answers take well under a millisecond: a whole-millisecond histogram would say 0 or 1.
    expect(result.p50).toBeGreaterThan(0);
    expect(result.p50).not.toBe(Math.round(result.p50));
    expect(result.p99).toBeGreaterThanOrEqual(result.p50);
  });

  it('counts a refused connection as an error, not a call', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    const result = await sequentialLoad(`http://127.0.0.1:${port}/`, 0.1, {}, '');
    expect(result.total).toBe(0);
    expect(result.errors).toBeGreaterThan(0);
    expect(result.p50).toBe(0);
  });
});
