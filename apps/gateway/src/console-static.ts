import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Env, Hono, Schema } from 'hono';

/** Where `pnpm --filter @agentgw/dashboard build` writes the console (same path from src/ and from a bundled dist/). */
export const DASHBOARD_DIST = fileURLToPath(new URL('../../dashboard/dist', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * The console's client routes (apps/dashboard/src/navigation.ts's PAGES, `/agents/<id>` and the
 * MCP client sign-in `/connect/<uid>`): only these get index.html, so any other path (a
 * misconfigured `/healthz` or `/readyz` probe, `/api/…`) is the JSON 404 rather than a 200 page.
 */
const CONSOLE_ROUTE =
  /^\/(?:|agents(?:\/[^/]+)?|tool-providers|tool-collisions|access-rules|tool-pins|confirmations|audit|credentials|credential-providers|api-keys|devices|connected-clients|users|connect\/[A-Za-z0-9_-]{1,64})\/?$/;

/** Whether `path` is one of the console's pages (exported for the test that holds it to the console's menu). */
export const isConsoleRoute = (path: string): boolean => CONSOLE_ROUTE.test(path);

/**
 * Serves the built web console at `/` when `dist` exists: a real file when one matches, otherwise
 * index.html for the console's client routes (`/agents`, `/credentials?serviceType=…`). Mounted
 * after every service, so API routes always win; every other path (unknown `/api/*`, missing
 * asset files, `/healthz`) keeps the JSON 404. Returns false when there is no build to serve.
 */
export function mountConsole(app: Hono<Env, Schema, string>, dist: string = DASHBOARD_DIST): boolean {
  const root = resolve(dist);
  const indexPath = join(root, 'index.html');
  if (!existsSync(indexPath)) return false;

  const send = (c: Context, file: string) => {
    const immutable = file.startsWith(join(root, 'assets') + sep);
    return c.body(readFileSync(file), 200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
  };

  app.get('*', (c) => {
    const path = c.req.path;
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return c.notFound();
    }
    const file = resolve(root, '.' + decoded);
    if (file !== root && file.startsWith(root + sep) && existsSync(file) && statSync(file).isFile())
      return send(c, file);
    return isConsoleRoute(path) ? send(c, indexPath) : c.notFound();
  });
  return true;
}
