import type { Context } from 'hono';

/** A request's headers as the gateway reads them: `get` and `has` as on a web Headers. */
export type RequestHeaders = Pick<Headers, 'get' | 'has'>;

/**
 * Node's raw header list read as a web Headers would read it: names case-insensitive, a repeated
 * header's values joined with ", " (Node's own `headers` object keeps only the first of some,
 * such as Authorization). Nothing is copied: a request reads a handful of headers once each.
 */
class RawHeaders implements RequestHeaders {
  constructor(private readonly raw: readonly string[]) {}

  get(name: string): string | null {
    const wanted = name.toLowerCase();
    let value: string | null = null;
    for (let i = 0; i < this.raw.length; i += 2) {
      const key = this.raw[i]!;
      if (key.length === wanted.length && key.toLowerCase() === wanted)
        value = value === null ? this.raw[i + 1]! : `${value}, ${this.raw[i + 1]!}`;
    }
    return value;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }
}

/**
 * The request's headers without the web Headers that `c.req.header()` and `c.req.raw.headers`
 * build on Node's server (every header converted and validated, more than the rest of a cached
 * tools/call's bookkeeping); under `app.request` (tests), the Request's own.
 */
export function requestHeaders(c: Context): RequestHeaders {
  // `@hono/node-server` puts Node's request in `c.env.incoming` (service-kit's hono-internals.test.ts checks it).
  const raw = (c.env as { incoming?: { rawHeaders?: unknown } } | undefined)?.incoming?.rawHeaders;
  return Array.isArray(raw) ? new RawHeaders(raw as string[]) : c.req.raw.headers;
}

/** One request header (see `requestHeaders`); undefined when absent, as `c.req.header(name)`. */
export function requestHeader(c: Context, name: string): string | undefined {
  return requestHeaders(c).get(name) ?? undefined;
}
