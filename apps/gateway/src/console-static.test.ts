import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { mountConsole } from './console-static.js';

function built(): string {
  const dist = mkdtempSync(join(tmpdir(), 'console-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(join(dist, 'assets', 'index-abc.js'), 'console.log(1)');
  return dist;
}

function appWith(dist: string): Hono {
  const app = new Hono();
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/api/v1/things', (c) => c.json({ things: [] }));
  app.notFound((c) => c.json({ code: 'NOT_FOUND', message: `No route for ${c.req.method} ${c.req.path}` }, 404));
  mountConsole(app, dist);
  return app;
}

describe('mountConsole', () => {
  it('serves index.html at / and for client routes, assets with their type and an immutable cache', async () => {
    const app = appWith(built());
    for (const path of ['/', '/agents/abc', '/credentials?serviceType=github']) {
      const res = await app.request(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain('id="root"');
    }
    const js = await app.request('/assets/index-abc.js');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toContain('immutable');
  });

  it('never shadows the API or /health, and keeps JSON 404s for unknown API paths and missing files', async () => {
    const app = appWith(built());
    expect(await (await app.request('/api/v1/things')).json()).toEqual({ things: [] });
    expect(await (await app.request('/health')).json()).toEqual({ status: 'ok' });
    for (const path of ['/api/v1/nope', '/api', '/assets/missing.js', '/%E0%A4%A', '/..%2f..%2fetc%2fpasswd.txt']) {
      const res = await app.request(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/json/);
    }
    expect((await app.request('/api/v1/things', { method: 'POST' })).status).toBe(404);
  });

  it('answers the JSON 404 for paths that are no console page, such as a misconfigured /healthz or /readyz probe', async () => {
    const app = appWith(built());
    for (const path of ['/healthz', '/readyz', '/ready', '/metrics', '/agents/abc/extra', '/connect', '/nope/']) {
      const res = await app.request(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/json/);
    }
  });

  it("serves every page of the console's menu, an agent's page and the MCP client sign-in page", async () => {
    const app = appWith(built());
    // The menu (apps/dashboard/src/navigation.ts, PAGES) is the source of truth: a page added there must be served.
    const menu = readFileSync(new URL('../../dashboard/src/navigation.ts', import.meta.url), 'utf8');
    const pages = [...menu.matchAll(/\{ path: '([^']+)'/g)].map((m) => m[1]!);
    expect(pages.length).toBeGreaterThan(10);
    for (const path of [...pages, '/agents/0d6c1f', '/connect/Ab-_9xYz', '/audit/']) {
      expect((await app.request(path)).status, path).toBe(200);
    }
  });

  it('mounts nothing when the console is not built', () => {
    const app = new Hono();
    expect(mountConsole(app, join(tmpdir(), 'no-such-console-build'))).toBe(false);
  });
});
