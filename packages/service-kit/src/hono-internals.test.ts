import { request as httpRequest } from 'node:http';
import { Hono, type MiddlewareHandler } from 'hono';
import { validator } from 'hono/validator';
import { matchedRoutes } from 'hono/route';
import { afterEach, describe, expect, it } from 'vitest';
import {
  answerHeader,
  composedHandlerOf,
  nodeIncoming,
  nodeOutgoing,
  peerAddress,
  provideBody,
  readHeadersFromNode,
} from './hono-internals.js';
import { listening, serveOnLoopback, TRANSPORTS, type Transport } from './testing.js';

// Each assumption the kit's shims make about Hono and @hono/node-server, through a real socket:
// when an upgrade breaks one, this fails instead of bodies, headers or client-gone going wrong quietly.

let open: Transport | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});
const serveApp = async (app: Hono) => (open = await listening(app));

/** Reads Node's request stream to its end, as the host's body reader does. */
const readAll = (c: Parameters<MiddlewareHandler>[0]) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    const incoming = nodeIncoming(c)!;
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => resolve(Buffer.concat(chunks)));
  });

/** Whether the adapter's Request has built its web Headers (its private `headersKey` slot, filled on first use). */
const webHeadersBuilt = (raw: Request) =>
  Object.getOwnPropertySymbols(raw).some(
    (key) => key.description === 'headersKey' && (raw as unknown as Record<symbol, unknown>)[key] !== undefined,
  );

describe('hono internals the kit relies on', () => {
  it("finds Node's request and response behind the adapter, and neither under app.request", async () => {
    const app = new Hono();
    app.get('/', (c) =>
      c.json({
        incoming: nodeIncoming(c)?.headers['x-probe'] ?? null,
        outgoing: nodeOutgoing(c)?.headersSent ?? null,
        peer: peerAddress(c) ?? null,
      }),
    );
    expect(await (await app.request('/', { headers: { 'x-probe': 'p' } })).json()).toEqual({
      incoming: null,
      outgoing: null,
      peer: null,
    });
    const transport = await serveApp(app);
    expect(await (await transport.request('/', { headers: { 'x-probe': 'p' } })).json()).toEqual({
      incoming: 'p',
      outgoing: false,
      peer: '127.0.0.1',
    });
  });

  it("sends headers set on Node's response before the route, under the answer's own of the same name", async () => {
    const app = new Hono();
    app.use(async (c, next) => {
      nodeOutgoing(c)!.setHeader('x-early', 'kit');
      nodeOutgoing(c)!.setHeader('x-both', 'kit');
      await next();
    });
    app.get('/json', (c) => c.json({ ok: true }, 200, { 'x-both': 'route' }));
    app.get(
      '/stream',
      () =>
        new Response(new ReadableStream({ start: (s) => (s.enqueue(new TextEncoder().encode('x')), s.close()) }), {
          headers: { 'x-both': 'route' },
        }),
    );
    const transport = await serveApp(app);
    for (const path of ['/json', '/stream']) {
      const res = await transport.request(path);
      expect([path, res.headers.get('x-early'), res.headers.get('x-both')]).toEqual([path, 'kit', 'route']);
      await res.arrayBuffer();
    }
  });

  it("answers Hono's header reads from Node's raw headers as the web Headers would, validators included", async () => {
    const app = new Hono();
    app.use((c, next) => {
      readHeadersFromNode(c);
      return next();
    });
    app.get(
      '/',
      // Every validator reads Content-Type, whatever its target.
      validator('query', (value) => value),
      (c) =>
        c.json({
          query: c.req.valid('query'),
          type: c.req.header('content-type') ?? null,
          repeated: c.req.header('X-Repeated') ?? null,
          absent: c.req.header('x-absent') ?? null,
          // Read before header() with no name, which is Hono's own and builds it.
          webHeadersBuilt: webHeadersBuilt(c.req.raw),
          all: c.req.header()['x-repeated'] ?? null,
        }),
    );
    const running = await serveOnLoopback(app);
    // Two lines of one header: joined with ", " as Headers.get joins them.
    const answer = await new Promise<string>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: running.port, path: '/?q=1' }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.setHeader('content-type', 'application/json');
      req.setHeader('x-repeated', ['one', 'two']);
      req.end();
    }).finally(() => running.shutdown());
    expect(JSON.parse(answer)).toEqual({
      query: { q: '1' },
      type: 'application/json',
      repeated: 'one, two',
      absent: null,
      webHeadersBuilt: false,
      all: 'one, two',
    });
  });

  it("sets an answer header on Node's response, under the answer's own; through c.header under app.request", async () => {
    const app = new Hono();
    app.use((c, next) => {
      answerHeader(c, 'x-kit', 'kit');
      return next();
    });
    app.get('/plain', (c) => c.json({ ok: true }));
    app.get('/own', (c) => c.json({ ok: true }, 200, { 'x-kit': 'route' }));
    for (const [name, transportOf] of Object.entries(TRANSPORTS)) {
      const transport = await transportOf(app);
      const plain = await transport.request('/plain');
      const own = await transport.request('/own');
      expect([name, plain.headers.get('x-kit'), own.headers.get('x-kit')]).toEqual([name, 'kit', 'route']);
      await transport.close();
    }
  });

  it("answers every body reader from a body read off Node's stream (Hono's cache and the adapter's rawBody hook)", async () => {
    const app = new Hono();
    app.use(async (c, next) => {
      const body = await readAll(c);
      provideBody(c, nodeIncoming(c)!, body, body.toString('utf8'));
      await next();
    });
    app.post('/', async (c) => {
      const [text, json, raw] = await Promise.all([c.req.text(), c.req.json(), c.req.raw.clone().text()]);
      return c.json({ text, json, raw });
    });
    const transport = await serveApp(app);
    const res = await transport.request('/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":"é"}',
    });
    expect(await res.json()).toEqual({ text: '{"a":"é"}', json: { a: 'é' }, raw: '{"a":"é"}' });
  });

  it("reaches a sub-app's own middleware through the handler Hono wraps it in (sub-app with onError)", async () => {
    const marked: MiddlewareHandler = (_c, next) => next();
    const sub = new Hono();
    sub.onError((_err, c) => c.text('sub error', 500));
    sub.use('/thing', marked);
    sub.get('/thing', (c) => {
      const reached = matchedRoutes(c).some((route) => {
        for (let h: unknown = route.handler; typeof h === 'function'; h = composedHandlerOf(h))
          if (h === marked) return true;
        return false;
      });
      return c.json({
        reached,
        wrapped: matchedRoutes(c).some((route) => composedHandlerOf(route.handler) === marked),
      });
    });
    const app = new Hono();
    app.route('/sub', sub);
    const transport = await serveApp(app);
    expect(await (await transport.request('/sub/thing')).json()).toEqual({ reached: true, wrapped: true });
  });

  it("reports a client gone mid-answer on Node's response (close before finish) and cancels the answer's stream", async () => {
    let sawClose!: (finished: boolean) => void;
    const closed = new Promise<boolean>((resolve) => (sawClose = resolve));
    let cancelled!: () => void;
    const cancel = new Promise<void>((resolve) => (cancelled = resolve));
    const app = new Hono();
    app.get('/endless', (c) => {
      const outgoing = nodeOutgoing(c)!;
      outgoing.once('close', () => sawClose(outgoing.writableFinished));
      return new Response(
        new ReadableStream({ start: (s) => s.enqueue(new TextEncoder().encode('first')), cancel: () => cancelled() }),
        {
          headers: { 'content-type': 'text/event-stream' },
        },
      );
    });
    let whole!: (finished: boolean) => void;
    const finishedNormally = new Promise<boolean>((resolve) => (whole = resolve));
    app.get('/done', (c) => {
      const outgoing = nodeOutgoing(c)!;
      outgoing.once('close', () => whole(outgoing.writableFinished));
      return c.text('done');
    });
    const transport = await serveApp(app);
    expect(await (await transport.request('/done')).text()).toBe('done');
    expect(await finishedNormally).toBe(true);

    const port = Number(new URL((await transport.request('/done')).url).port);
    const req = httpRequest({ host: '127.0.0.1', port, path: '/endless' }, (res) =>
      res.once('data', () => req.destroy()),
    );
    req.on('error', () => undefined);
    req.end();
    expect(await closed).toBe(false);
    await cancel;
  });
});
