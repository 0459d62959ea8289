import type { Context, MiddlewareHandler } from 'hono';
import { ValidationError } from '../errors.js';

/**
 * Deepest nesting of arrays/objects accepted in a JSON body. Real payloads (provider configs,
 * tool params) stay far below; thousands of levels overflowed the stack of recursive code.
 */
export const MAX_JSON_DEPTH = 64;

const tooDeep = (maxDepth: number) =>
  new ValidationError(`JSON body nested deeper than ${maxDepth} levels`, { field: '(body)' });

/**
 * Throws a 400 when the JSON text nests deeper than `maxDepth`: one pass, no recursion, no
 * parsing, so it is safe on hostile input before JSON.parse or any validator sees it.
 */
export function assertJsonDepth(text: string, maxDepth = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === 0x5c) escaped = true;
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > maxDepth) throw tooDeep(maxDepth);
    } else if (ch === 0x7d || ch === 0x5d) {
      depth--;
    }
  }
}

export interface JsonDepthLimitOptions {
  maxDepth?: number;
  /**
   * Requests left to their route (default: none). Routes with a body limit of their own skip the
   * host's read, which would otherwise buffer the body before their limit applies; they parse
   * with `parseJson`, which checks the depth itself.
   */
  skip?: (c: Context) => boolean;
}

/**
 * Middleware refusing JSON bodies nested deeper than the cap (400) before any handler or
 * validator parses them. It reads the body once with `c.req.text()`: hono keeps that text, so
 * the validators (`c.req.json()`), `parseJson` and the MCP transport parse the same string
 * without reading the body again (no clone, no tee). Handlers must read the body through `c.req`.
 */
export const jsonDepthLimit =
  (options: JsonDepthLimitOptions = {}): MiddlewareHandler =>
  async (c, next) => {
    if (c.req.raw.body && /json/i.test(c.req.header('content-type') ?? '') && !options.skip?.(c)) {
      assertJsonDepth(await c.req.text(), options.maxDepth);
    }
    await next();
  };
