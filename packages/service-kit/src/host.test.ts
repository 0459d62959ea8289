import { createRoute, z } from '@hono/zod-openapi';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyLimit } from './body-limit.js';
import { createHost } from './host.js';
import { errorResponses, jsonBody, jsonResponse, openApiApp } from './route-kit.js';
import { serve } from './serve.js';
import { defineService } from './service-definition.js';
import { createTestDeps, testHost, TRANSPORTS, type TestDeps, type Transport } from './testing.js';

const MiB = 1024 * 1024;

/** A route group with a documented route and one that takes up to 2 MiB. */
const big = defineService({
  name: 'big',
  defaultPort: 0,
  create: () => {
    const routes = openApiApp();
    routes.use('/api/v1/big/upload', bodyLimit(2 * MiB));
    routes.post('/api/v1/big/upload', async (c) => c.json({ size: (await c.req.text()).length }));
    routes.openapi(
      createRoute({
        method: 'post',
        path: '/api/v1/big/echo',
        request: { body: jsonBody(z.object({ word: z.string().max(10) })) },
        responses: { 200: jsonResponse(z.object({ word: z.string() }), 'The word'), ...errorResponses(400) },
      }),
      (c) => c.json({ word: c.req.valid('json').word }, 200),
    );
    return { routes };
  },
});

/** A plain Hono group with the default limit and a failing route. */
const small = defineService({
  name: 'small',
  defaultPort: 0,
  create: () => {
    const routes = new Hono();
    routes.post('/api/v1/small/upload', async (c) => c.json({ size: (await c.req.text()).length }));
    routes.post('/api/v1/small/bytes', async (c) =>
      c.json({ hex: Buffer.from(await c.req.arrayBuffer()).toString('hex') }),
    );
    routes.post('/api/v1/small/raw', async (c) =>
      c.json({ hex: Buffer.from(await new Response(c.req.raw.body).arrayBuffer()).toString('hex') }),
    );
    routes.get('/api/v1/small/boom', () => {
      throw new Error('secret detail');
    });
    return { routes };
  },
});

describe('createHost', () => {
  let deps: TestDeps;
  beforeAll(async () => {
    deps = await createTestDeps();
  });
  afterAll(() => deps.close());

  it('adds the shell once: one tracing, metrics, request-id, access-log, security and request-body layer (body limit + JSON depth), one /health, probes and /metrics', async () => {
    const host = await createHost([big, small], deps, { name: 'both' });
    const all = host.app.routes.filter((r) => r.method === 'ALL' && r.path === '/*');
    expect(all).toHaveLength(6);
    // With the access log off its layer is not added at all.
    const quiet = await createHost(
      [big, small],
      { ...deps, config: { ...deps.config, ACCESS_LOG: 'off' } },
      { name: 'both' },
    );
    expect(quiet.app.routes.filter((r) => r.method === 'ALL' && r.path === '/*')).toHaveLength(5);
    for (const path of ['/health', '/health/live', '/health/ready', '/metrics']) {
      expect(host.app.routes.filter((r) => r.path === path)).toHaveLength(1);
    }
    const health = await host.app.request('/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', service: 'both' });
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
  });

  describe.each(Object.entries(TRANSPORTS))('request bodies over %s', (_name, connect) => {
    let transport: Transport;
    beforeAll(async () => {
      const { app } = await createHost([big, small], deps, { name: 'both' });
      transport = await connect(app);
    });
    afterAll(() => transport.close());
    const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
      transport.request(path, { method: 'POST', body, headers });

    it("lets a route group's own limit replace the default, and keeps the default everywhere else", async () => {
      const body = 'x'.repeat(1.5 * MiB);
      const own = await post('/api/v1/big/upload', body);
      expect(own.status).toBe(200);
      expect(await own.json()).toEqual({ size: body.length });
      expect((await post('/api/v1/big/upload', 'x'.repeat(2 * MiB + 1))).status).toBe(413);
      const capped = await post('/api/v1/small/upload', body);
      expect(capped.status).toBe(413);
      expect(await capped.json()).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'Request body too large' });
      // A route of the big group without its own limit gets the default.
      expect((await post('/api/v1/big/echo', body, { 'content-type': 'application/json' })).status).toBe(413);
    });

    it('refuses a JSON body nested past the cap with 400 before any route runs, and validates a good one', async () => {
      const deep = '['.repeat(10_000) + ']'.repeat(10_000);
      const res = await post('/api/v1/big/echo', deep, { 'content-type': 'application/json' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: '(body)' });
      // Under a route's own limit too (the host reads those bodies as well on Node's server).
      expect((await post('/api/v1/big/upload', deep, { 'content-type': 'application/json' })).status).toBe(400);
      const good = await post('/api/v1/big/echo', JSON.stringify({ word: 'hi' }), {
        'content-type': 'application/json',
      });
      expect(await good.json()).toEqual({ word: 'hi' });
    });

    it('hands every body reader the same bytes: text, bytes, and the web Request body', async () => {
      const bytes = Buffer.from('\u00e9t\u00e9 \u{1F600} and binary-safe', 'utf8');
      for (const path of ['/api/v1/small/bytes', '/api/v1/small/raw']) {
        const res = await post(path, bytes);
        expect(res.status, path).toBe(200);
        expect(await res.json(), path).toEqual({ hex: bytes.toString('hex') });
      }
    });
  });

  it('limits chunked bodies (no Content-Length) the same way, over a real socket', async () => {
    const { app } = await createHost([big, small], deps, { name: 'both' });
    const running = await serve(app, {
      port: 0,
      hostname: '127.0.0.1',
      deps: { close: async () => {} },
      logger: deps.logger,
      handleSignals: false,
    });
    try {
      const chunked = (size: number) =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (let sent = 0; sent < size; sent += 64 * 1024)
              controller.enqueue(new Uint8Array(Math.min(64 * 1024, size - sent)).fill(120));
            controller.close();
          },
        });
      const post = (path: string, size: number) =>
        fetch(`http://127.0.0.1:${running.port}${path}`, { method: 'POST', body: chunked(size), duplex: 'half' });
      expect((await post('/api/v1/big/upload', 1.5 * MiB)).status).toBe(200);
      expect((await post('/api/v1/small/upload', 1.5 * MiB)).status).toBe(413);
    } finally {
      await running.shutdown();
    }
  });

  it('answers the one error body for unknown paths, validation failures and crashes', async () => {
    const { app } = await createHost([big, small], deps, { name: 'both' });
    const missing = await app.request('/api/v1/nothing');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'NOT_FOUND' });
    const invalid = await app.request('/api/v1/big/echo', {
      method: 'POST',
      body: JSON.stringify({ word: 'far too long a word' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'word' });
    const boom = await app.request('/api/v1/small/boom');
    expect(boom.status).toBe(500);
    expect(JSON.stringify(await boom.json())).not.toContain('secret detail');
  });

  it('gathers every service’s documented routes into one OpenAPI document', async () => {
    const { app } = await createHost([big, small], deps, { name: 'both' });
    const doc = (await (await app.request('/api/v1/openapi.json')).json()) as {
      paths: Record<string, unknown>;
      components: { securitySchemes: object };
    };
    expect(Object.keys(doc.paths)).toEqual(['/api/v1/big/echo']);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['bearerAuth', 'apiKey', 'userId', 'serviceToken']);
    expect((await app.request('/api/v1/docs')).status).toBe(200);
  });

  it('starts runtimes in order, stops them within the deadline, and stops the started ones when a start fails', async () => {
    const events: string[] = [];
    const tracked = (name: string, options: { failStart?: boolean; hang?: boolean } = {}) =>
      defineService({
        name,
        defaultPort: 0,
        create: () => ({
          routes: new Hono(),
          async start() {
            if (options.failStart) throw new Error(`${name} cannot start`);
            events.push(`start ${name}`);
          },
          async stop({ deadlineMs }) {
            events.push(`stop ${name} ${deadlineMs}`);
            if (options.hang) await new Promise(() => {});
          },
        }),
      });
    const host = await createHost([tracked('a'), tracked('b', { hang: true })], deps, { name: 'x' });
    await host.start();
    // b's stop never ends: stop() returning at all is the deadline at work (a hang fails by the test's timeout).
    await host.stop({ deadlineMs: 100 });
    // Each stop gets what the settle step left of the 100 ms: nothing, on a machine slow enough to spend it all.
    expect(events.map((e) => e.replace(/^(stop \w) \d+$/, '$1'))).toEqual(['start a', 'start b', 'stop a', 'stop b']);
    for (const ms of events.slice(2).map((e) => Number(e.split(' ')[2]))) expect(ms >= 0 && ms <= 100).toBe(true);

    events.length = 0;
    const failing = await createHost([tracked('a'), tracked('b', { failStart: true }), tracked('c')], deps, {
      name: 'x',
    });
    await expect(failing.start()).rejects.toThrow('b cannot start');
    // The start's own stop bound is 5 s, less what the settle step took.
    expect(events.map((e) => e.replace(/^(stop \w) \d+$/, '$1'))).toEqual(['start a', 'stop a']);
    const left = Number(events[1]!.split(' ')[2]);
    expect(left > 0 && left <= 5_000).toBe(true);
  });

  it('settles every runtime before it stops any, so what a settle records still reaches a running consumer', async () => {
    const events: string[] = [];
    const staged = (name: string, settles: boolean) =>
      defineService({
        name,
        defaultPort: 0,
        create: () => ({
          routes: new Hono(),
          ...(settles && { settle: async () => void events.push(`settle ${name}`) }),
          stop: async () => void events.push(`stop ${name}`),
        }),
      });
    const host = await createHost([staged('consumer', false), staged('producer', true)], deps, { name: 'x' });
    await host.start();
    await host.stop({ deadlineMs: 1_000 });
    expect(events).toEqual(['settle producer', 'stop consumer', 'stop producer']);
  });

  it('serve calls the services’ stop after it stops accepting and before closing the deps', async () => {
    const events: string[] = [];
    const service = defineService({
      name: 'lifecycle',
      defaultPort: 0,
      create: () => ({ routes: new Hono(), stop: async ({ deadlineMs }) => void events.push(`stop ${deadlineMs}`) }),
    });
    const host = await testHost(service, deps);
    const running = await serve(host.app, {
      port: 0,
      hostname: '127.0.0.1',
      deps: { close: async () => void events.push('deps closed') },
      logger: deps.logger,
      handleSignals: false,
      shutdownTimeoutMs: 300,
      stopServices: host.stop,
    });
    await running.shutdown();
    // The stop gets what is left of the 300 ms bound after the settle step (less on a busy machine).
    expect(events).toEqual([expect.stringMatching(/^stop (\d+)$/), 'deps closed']);
    const left = Number(events[0]!.slice('stop '.length));
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(300);
  });
});
