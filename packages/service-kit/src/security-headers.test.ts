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

  it('lets exactly the API reference page’s own scripts run: a fresh nonce per view, in the CSP and on every script tag', async () => {
    const app = await connect((await createHost([kinds], deps, { name: 'kinds' })).app);
    onTestFinished(() => app.close());
    const nonces: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await app.request(DOCS_PATH);
      expect(res.status).toBe(200);
      const csp = res.headers.get('content-security-policy')!;
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      expect(nonce).toBeTruthy();
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("'unsafe-inline' 'nonce");
      const html = await res.text();
      const scripts = html.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts.length).toBeGreaterThan(0);
      for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
      nonces.push(nonce!);
    }
    expect(nonces[0]).not.toBe(nonces[1]);
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
