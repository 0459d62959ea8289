import type { MiddlewareHandler } from 'hono';
import { ValidationError } from '../errors.js';

/**
 * Deepest nesting of arrays/objects accepted in a JSON body. Real payloads (provider configs,
 * tool params) stay far below; thousands of levels overflowed the stack of recursive code.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Throws a 400 when the JSON text nests deeper than `maxDepth`. A single pass over the text
 * with no recursion and no parsing, so it is safe to run before JSON.parse on hostile input.
 */
export function assertJsonDepth(text: string, maxDepth = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > maxDepth) {
        throw new ValidationError(`JSON body nested deeper than ${maxDepth} levels`, { field: '(body)' });
      }
    } else if (ch === 0x7d || ch === 0x5d) {
      depth--;
    }
  }
}

/**
 * Middleware refusing JSON bodies nested deeper than the cap before any handler or validator
 * parses them. Hono caches the body text, so later `c.req.json()`/`text()` still work.
 */
export const jsonDepthLimit =
  (maxDepth = MAX_JSON_DEPTH): MiddlewareHandler =>
  async (c, next) => {
    const type = c.req.header('content-type') ?? '';
    if (c.req.raw.body && /json/i.test(type)) assertJsonDepth(await c.req.text(), maxDepth);
    await next();
  };
