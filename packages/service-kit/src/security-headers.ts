import type { Context, MiddlewareHandler } from 'hono';
import { nodeOutgoing } from './hono-internals.js';

/** Policy of every non-HTML answer (JSON, event streams): nothing may load, frame or submit anything. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * Policy of HTML pages (the web console and the API reference): their own scripts, styles, images
 * and API only. Inline style attributes are allowed (React, the chart and Swagger UI set them);
 * inline scripts are not.
 */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface SecurityHeaderOptions {
  /** `Strict-Transport-Security` max-age; 0 sends none (the listener may be plain HTTP behind no TLS). */
  hstsMaxAgeSeconds: number;
}

/**
 * Headers every answer carries, whichever service gave it. Set after the route ran, and only
 * where the route set none (the API reference, under /api/, sets the page policy itself): nosniff, no
 * referrer, no framing, same-origin resource policy, a CSP by content type, and HSTS when configured.
 */
export const securityHeaders = (options: SecurityHeaderOptions): MiddlewareHandler => {
  // Built once, not per request: the list depends only on the kind of answer (API or page).
  const headersFor = (csp: string): readonly (readonly [string, string])[] => {
    const wanted: [string, string][] = [
      // JSON and event streams must never be sniffed into something a browser would render or run.
      ['X-Content-Type-Options', 'nosniff'],
      ['Referrer-Policy', 'no-referrer'],
      ['X-Frame-Options', 'DENY'],
      ['Cross-Origin-Resource-Policy', 'same-origin'],
      ['Content-Security-Policy', csp],
    ];
    if (options.hstsMaxAgeSeconds > 0)
      wanted.push(['Strict-Transport-Security', `max-age=${options.hstsMaxAgeSeconds}; includeSubDomains`]);
    return wanted;
  };
  const apiHeaders = headersFor(API_CSP);
  const pageHeaders = headersFor(PAGE_CSP);
  const pageOnly = pageHeaders.filter(([name, value]) => apiHeaders.some(([n, v]) => n === name && v !== value));
  return async (c, next) => {
    const outgoing = nodeOutgoing(c);
    if (outgoing) {
      // On Node's server the API set goes on the response before the route runs: the answer's own
      // headers, written with it, take precedence (as "only where the route set none" wants), and no
      // web Response is copied to add them afterwards.
      for (const [name, value] of apiHeaders) outgoing.setHeader(name, value);
      await next();
      if (isPage(c)) for (const [name, value] of pageOnly) if (!c.res.headers.has(name)) c.header(name, value);
      return;
    }
    await next();
    // After the route, c.header copies a response with immutable headers (one passed through from fetch).
    for (const [name, value] of isPage(c) ? pageHeaders : apiHeaders)
      if (!c.res.headers.has(name)) c.header(name, value);
  };
};

/**
 * Only the console's pages get the page policy: HTML an API route passes through (an agent's
 * upstream answer) stays under the API policy, so it runs nothing on this origin.
 */
function isPage(c: Context): boolean {
  return !c.req.path.startsWith('/api/') && (c.res.headers.get('content-type') ?? '').startsWith('text/html');
}
