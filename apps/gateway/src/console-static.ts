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

/** API paths and the health check are never answered with the console's page. */
const isApiPath = (path: string): boolean => path === '/api' || path.startsWith('/api/') || path === '/health';

/**
 * Serves the built web console at `/` when `dist` exists: a real file when one matches, otherwise
 * index.html for the console's client routes (`/agents`, `/credentials?serviceType=…`). Mounted
 * after every service, so API routes always win; unknown `/api/*` paths and missing asset files
 * (a path with an extension) keep the JSON 404. Returns false when there is no build to serve.
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
    if (isApiPath(path)) return c.notFound();
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return c.notFound();
    }
    const file = resolve(root, '.' + decoded);
    if (file !== root && file.startsWith(root + sep) && existsSync(file) && statSync(file).isFile())
      return send(c, file);
    if (extname(decoded) !== '') return c.notFound();
    return send(c, indexPath);
  });
  return true;
}
