import { request as httpRequest } from 'node:http';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { requestHeader, requestHeaders } from '@agentgw/core';
import { serveOnLoopback } from './testing.js';

let open: { shutdown(): Promise<void> } | undefined;
afterEach(async () => {
  await open?.shutdown();
  open = undefined;
});

/** What the route read, through a real socket, with each header line sent as given. */
async function readThrough(lines: Record<string, string | string[]>): Promise<unknown> {
  const app = new Hono();
  app.get('/', (c) => {
    const ours = requestHeaders(c);
    // Read before Hono's own, which would build the web Headers this module avoids.
    const read = {
      twice: ours.get('x-twice'),
      mixedCase: ours.get('X-MiXeD'),
      absent: requestHeader(c, 'x-absent') ?? 'undefined',
      has: ours.has('x-mixed'),
      authorization: requestHeader(c, 'authorization'),
    };
    const hono = {
      twice: c.req.header('x-twice'),
      mixedCase: c.req.header('X-MiXeD'),
      authorization: c.req.header('authorization'),
    };
    return c.json({ read, hono });
  });
  const running = await serveOnLoopback(app);
  open = running;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: running.port, path: '/', headers: lines }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('requestHeaders on Node’s server', () => {
  it('reads as a web Headers does: any case, repeats joined, absent as undefined', async () => {
    const answer = (await readThrough({
      'X-Twice': ['a', 'b'],
      'x-mixed': 'v',
      Authorization: ['Bearer one', 'Bearer two'],
    })) as { read: Record<string, unknown>; hono: Record<string, unknown> };
    expect(answer.read).toEqual({
      twice: 'a, b',
      mixedCase: 'v',
      absent: 'undefined',
      has: true,
      // Node's own headers object would keep only "Bearer one": a repeat must not pass as one credential.
      authorization: 'Bearer one, Bearer two',
    });
    expect(answer.hono).toEqual({ twice: 'a, b', mixedCase: 'v', authorization: 'Bearer one, Bearer two' });
  });

  it('is the Request’s own headers under app.request', async () => {
    const app = new Hono().get('/', (c) => c.json({ twice: requestHeader(c, 'X-Twice') ?? null }));
    const res = await app.request('/', {
      headers: [
        ['x-twice', 'a'],
        ['x-twice', 'b'],
      ],
    });
    expect(await res.json()).toEqual({ twice: 'a, b' });
  });
});
