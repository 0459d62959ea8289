import type { OpenAPIHono } from '@hono/zod-openapi';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PAGE_CSP } from './security-headers.js';

/** The pinned Swagger UI build (swagger-ui-dist, exact version in package.json) whose files the page loads. */
const ASSETS = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
} as const;
type AssetName = keyof typeof ASSETS;

/** Starts Swagger UI on the page's element with the document it names: a file of its own, so no inline script runs. */
const INIT_SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('api-reference');
  window.SwaggerUIBundle({ url: root.getAttribute('data-url'), domNode: root, deepLinking: true });
})();
`;

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The page: only same-origin files, relative to it (so it works behind a path prefix), and no inline script or style. */
const pageHtml = (title: string, base: string): string => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="${base}/swagger-ui.css" />
  </head>
  <body>
    <div id="api-reference" data-url="openapi.json"></div>
    <script src="${base}/swagger-ui-bundle.js"></script>
    <script src="${base}/init.js"></script>
  </body>
</html>
`;

const CACHE = 'public, max-age=3600';

/**
 * The API reference at `path`: a page and the Swagger UI files it loads, all served from this
 * origin (nothing from a CDN: the page works offline, and no third party's script runs with an
 * admin's cookie), under the console's policy (`script-src 'self'`, no inline script). The
 * files are read from the package once, at the first request for each.
 */
export function mountDocsPage(app: OpenAPIHono, path: string, title: string): void {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const html = pageHtml(title, base);
  const resolve = createRequire(import.meta.url).resolve;
  const read = new Map<AssetName, string>();
  const asset = (name: AssetName): string => {
    let text = read.get(name);
    if (text === undefined) {
      text = readFileSync(resolve(`swagger-ui-dist/${name}`), 'utf8');
      read.set(name, text);
    }
    return text;
  };
  app.get(path, (c) => {
    c.header('Content-Security-Policy', PAGE_CSP);
    return c.html(html);
  });
  app.get(`${path}/init.js`, (c) =>
    c.body(INIT_SCRIPT, 200, { 'content-type': ASSETS['swagger-ui-bundle.js'], 'cache-control': CACHE }),
  );
  for (const name of Object.keys(ASSETS) as AssetName[])
    app.get(`${path}/${name}`, (c) =>
      c.body(asset(name), 200, { 'content-type': ASSETS[name], 'cache-control': CACHE }),
    );
}
