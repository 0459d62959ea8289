import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createHost } from './host.js';
import { DOCS_PATH } from './openapi.js';
import { API_CSP, PAGE_CSP } from './security-headers.js';
import { defineService } from './service-definition.js';
import { createTestDeps, TRANSPORTS, type TestDeps } from './testing.js';

/** Answers of every kind a service gives: JSON, an HTML page, a fetched (immutable) response, a stream, a throw, its own CSP. */
const kinds = defineService({
  name: 'kinds',
  defaultPort: 0,
  create: () => {
    const routes = new Hono();
    routes.get('/api/v1/kinds/json', (c) => c.json({ ok: true }));
    routes.get('/console', (c) => c.html('<!doctype html><title>console</title>'));
    routes.get('/api/v1/kinds/upstream-html', (c) => c.html('<script>alert(1)</script>'));
    routes.get('/api/v1/kinds/fetched', () => fetch('data:application/json,{"passed":true}'));
    routes.get(
      '/api/v1/kinds/stream',
      () =>
        new Response(new ReadableStream({ start: (ctl) => ctl.close() }), {
          headers: { 'content-type': 'text/event-stream' },
        }),
    );
    routes.get('/api/v1/kinds/boom', () => {
      throw new Error('boom');
    });
    routes.get('/api/v1/kinds/own', (c) => {
      c.header('Content-Security-Policy', "default-src 'self'");
      return c.json({ own: true });
    });
    return { routes };
  },
});

const COMMON = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
};

describe.each(Object.entries(TRANSPORTS))('security headers on every answer over %s', (_name, connect) => {
  let deps: TestDeps;
  beforeAll(async () => {
    deps = await createTestDeps();
  });
  afterAll(() => deps.close());

  it('sends nosniff, no-referrer, no framing, same-origin CORP and the strict API CSP on JSON, streams, errors and 404s', async () => {
    const app = await connect((await createHost([kinds], deps, { name: 'kinds' })).app);
    onTestFinished(() => app.close());
    for (const [path, status] of [
      ['/api/v1/kinds/json', 200],
      ['/api/v1/kinds/fetched', 200],
      ['/api/v1/kinds/stream', 200],
      ['/api/v1/kinds/boom', 500],
      ['/api/v1/nothing-here', 404],
      ['/health', 200],
      ['/api/v1/openapi.json', 200],
    ] as const) {
      const res = await app.request(path);
      expect(res.status, path).toBe(status);
      const headers = Object.fromEntries(res.headers.entries());
      expect(headers, path).toMatchObject({ ...COMMON, 'content-security-policy': API_CSP });
      expect(headers['strict-transport-security'], path).toBeUndefined();
    }
    expect(await (await app.request('/api/v1/kinds/fetched')).json()).toEqual({ passed: true });
    expect(API_CSP).toContain("default-src 'none'");
    expect(API_CSP).toContain("frame-ancestors 'none'");
  });

  it("gives the console's HTML pages their policy, HTML under /api/ the API one, and keeps a route's own CSP", async () => {
    const app = await connect((await createHost([kinds], deps, { name: 'kinds' })).app);
    onTestFinished(() => app.close());
    const page = await app.request('/console');
    expect(Object.fromEntries(page.headers.entries())).toMatchObject({
      ...COMMON,
      'content-security-policy': PAGE_CSP,
    });
    const passedThrough = await app.request('/api/v1/kinds/upstream-html');
    expect(passedThrough.headers.get('content-security-policy')).toBe(API_CSP);
    const own = await app.request('/api/v1/kinds/own');
    expect(own.headers.get('content-security-policy')).toBe("default-src 'self'");
    expect(own.headers.get('x-frame-options')).toBe('DENY');
  });

  it('serves the API reference from this origin alone: same-origin scripts and styles, each served, under the page policy', async () => {
    const app = await connect((await createHost([kinds], deps, { name: 'kinds' })).app);
    onTestFinished(() => app.close());
    const res = await app.request(DOCS_PATH);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(PAGE_CSP).toContain("script-src 'self';");
    const html = await res.text();
    // No inline script: every script tag loads a file, by a relative URL (this origin, behind any prefix).
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    const links = [...html.matchAll(/<link\b[^>]*href="([^"]+)"/g)].map((m) => m[1]!);
    const sources = scripts.map(([, attributes, body]) => {
      expect(body).toBe('');
      return /\bsrc="([^"]+)"/.exec(attributes!)?.[1];
    });
    for (const url of [...sources, ...links]) {
      expect(url).toMatch(/^[a-z][\w.-]*\/[\w.-]+$/);
      const asset = await app.request(new URL(url!, `http://gateway.test${DOCS_PATH}`).pathname);
      expect(asset.status, url).toBe(200);
      expect(asset.headers.get('content-type'), url).toMatch(/^text\/(javascript|css)/);
      expect((await asset.text()).length, url).toBeGreaterThan(url!.endsWith('init.js') ? 0 : 10_000);
    }
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('adds Strict-Transport-Security only when HSTS_MAX_AGE_SECONDS is set', async () => {
    const app = await connect(
      (
        await createHost(
          [kinds],
          { ...deps, config: { ...deps.config, HSTS_MAX_AGE_SECONDS: 31_536_000 } },
          { name: 'kinds' },
        )
      ).app,
    );
    onTestFinished(() => app.close());
    for (const path of ['/api/v1/kinds/json', '/console', '/api/v1/nothing-here']) {
      expect((await app.request(path)).headers.get('strict-transport-security'), path).toBe(
        'max-age=31536000; includeSubDomains',
      );
    }
  });
});
