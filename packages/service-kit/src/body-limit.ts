import { PayloadTooLargeError } from '@agentgw/core';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit as honoBodyLimit } from 'hono/body-limit';
import { matchedRoutes } from 'hono/route';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Marks the middlewares made by `bodyLimit`, so the host's default knows to step aside. */
const OWN_LIMITS = new WeakSet<object>();
/** Hono's key for the handler it wraps when a sub-app has an error handler of its own. */
const COMPOSED_HANDLER = '__COMPOSED_HANDLER';

/**
 * A route group's own body limit (413 with the one error body). Where it matches, the host's
 * default limit does not apply at all, so the group may accept more (or less) than the default.
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler {
  const middleware = honoBodyLimit({ maxSize: maxBytes, onError: (c) => c.json(new PayloadTooLargeError().toBody(), 413) });
  OWN_LIMITS.add(middleware);
  return middleware;
}

function isOwnLimit(handler: unknown): boolean {
  let current = handler as (object & { [COMPOSED_HANDLER]?: unknown }) | undefined;
  while (current) {
    if (OWN_LIMITS.has(current)) return true;
    current = current[COMPOSED_HANDLER] as typeof current;
  }
  return false;
}

/** Whether the request's matched routes declare a `bodyLimit` of their own (and so read their body themselves). */
export function hasOwnBodyLimit(c: Context): boolean {
  return matchedRoutes(c).some((route) => isOwnLimit(route.handler));
}

/**
 * The host's default: `maxBytes` for every request whose matched routes declare no
 * `bodyLimit` of their own. Registered once, before every service's routes.
 */
export function defaultBodyLimit(maxBytes: number = DEFAULT_MAX_BODY_BYTES): MiddlewareHandler {
  const limit = honoBodyLimit({ maxSize: maxBytes, onError: (c) => c.json(new PayloadTooLargeError().toBody(), 413) });
  return async (c, next) => {
    if (hasOwnBodyLimit(c)) return next();
    return limit(c, next);
  };
}
