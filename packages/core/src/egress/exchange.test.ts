import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EndpointSplits, exchange, type ExchangeOptions, type ExchangeRequest } from './exchange.js';

let server: Server;
let origin: string;
const agent = new Agent();

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}');
    if (req.url === '/chunked') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"part":');
      setTimeout(() => res.end('"two"}'), 5);
      return;
    }
    if (req.url === '/big') return void res.writeHead(200).end(Buffer.alloc(64 * 1024, 'x'));
    if (req.url === '/echo') {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => res.writeHead(201).end(`${req.method} ${req.headers['x-test']} ${Buffer.concat(parts)}`));
      return;
    }
    if (req.url === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Offers far more than anyone reads, as fast as the socket takes it.
      const offer = (): void => {
        while (res.write(`data: ${'y'.repeat(4096)}\n\n`)) if (res.writableLength > 1 << 20) break;
      };
      offer();
      res.on('drain', offer);
      req.on('close', () => res.destroy());
      return;
    }
    if (req.url === '/never') return; // no head, ever
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await agent.close();
  await new Promise((done) => server.close(done));
});

const get = (path: string): ExchangeRequest => ({ origin, path, method: 'GET', headers: [], body: null });
const collect: ExchangeOptions = {
  maxBytes: 1024,
  tooLarge: (max) => new Error(`too large: over ${max}`),
  bodyMode: () => 'collect',
};

describe('exchange (a real server on 127.0.0.1)', () => {
  it('collects a JSON answer whole, with its head', async () => {
    const answer = await exchange(agent, get('/json'), collect);
    expect(answer.kind).toBe('whole');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(String(answer.body)).toBe('{"a":1}');
  });

  it('joins an answer that arrives in several chunks', async () => {
    const answer = await exchange(agent, get('/chunked'), collect);
    expect(String(answer.body)).toBe('{"part":"two"}');
  });

  it('sends the method, headers and body it is given', async () => {
    const post: ExchangeRequest = { origin, path: '/echo', method: 'POST', headers: ['x-test', 'yes'], body: 'hello' };
    const answer = await exchange(agent, post, collect);
    expect([answer.status, String(answer.body)]).toEqual([201, 'POST yes hello']);
  });

  it('drops a body it is told to drop, keeping the head', async () => {
    const answer = await exchange(agent, get('/json'), { ...collect, bodyMode: () => 'discard' });
    expect(answer).toMatchObject({ kind: 'whole', status: 200, body: null });
  });

  it("aborts an answer past its limit with the caller's error", async () => {
    await expect(exchange(agent, get('/big'), collect)).rejects.toThrow('too large');
  });

  it('names a failure before the head as such (a port nobody listens on)', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const failure = (err: unknown, afterHead: boolean) => ({ afterHead, code: (err as { code?: string }).code });
    const request = { ...get('/'), origin: `http://127.0.0.1:${port}` };
    await expect(exchange(agent, request, { ...collect, failure })).rejects.toEqual({
      afterHead: false,
      code: 'ECONNREFUSED',
    });
  });

  it('lets its watcher abort a request that waits, and stops watching after', async () => {
    let stopped = 0;
    const watch = (abort: (err: Error) => void) => {
      const timer = setTimeout(() => abort(new Error('deadline')), 20);
      return () => {
        clearTimeout(timer);
        stopped++;
      };
    };
    await expect(exchange(agent, get('/never'), { ...collect, watch })).rejects.toThrow('deadline');
    expect(stopped).toBe(1);
  });

  it('fails, never throws, on a header undici refuses to write', async () => {
    const bad = { ...get('/json'), headers: ['x-bad', 'a\r\nb'] };
    await expect(exchange(agent, bad, collect)).rejects.toBeInstanceOf(Error);
  });

  it('streams an event stream and holds the other side back while nobody reads', async () => {
    const answer = await exchange(agent, get('/events'), { ...collect, bodyMode: () => 'stream' });
    expect(answer.kind).toBe('stream');
    const body = answer.body as Readable;
    const first = (await body[Symbol.asyncIterator]().next()) as IteratorResult<Buffer>;
    expect(String(first.value)).toMatch(/^data: y/);
    await new Promise((done) => setTimeout(done, 200));
    // Paused behind its 16 KB buffer: nowhere near the megabytes on offer.
    expect(body.readableLength).toBeLessThan(256 * 1024);
    body.destroy();
  });
});

describe('EndpointSplits', () => {
  it('splits a URL into origin and path with its query, the same object while kept', () => {
    const splits = new EndpointSplits(2);
    const first = splits.of('https://agent.example:8443/a/b?x=1#frag');
    expect(first).toEqual({ origin: 'https://agent.example:8443', path: '/a/b?x=1' });
    expect(splits.of('https://agent.example:8443/a/b?x=1#frag')).toBe(first);
  });

  it('stays within its bound (cleared when full) and refuses a URL that does not parse', () => {
    const splits = new EndpointSplits(2);
    const first = splits.of('http://a.test/');
    splits.of('http://b.test/');
    splits.of('http://c.test/');
    expect(splits.of('http://a.test/')).not.toBe(first);
    expect(() => splits.of('not a url')).toThrow(TypeError);
  });
});
