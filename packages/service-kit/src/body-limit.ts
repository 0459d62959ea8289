import { PayloadTooLargeError } from '@agentgw/core';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit as honoBodyLimit } from 'hono/body-limit';
import { matchedRoutes } from 'hono/route';
import { composedHandlerOf } from './hono-internals.js';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** The middlewares made by `bodyLimit`, with their limits, so the host's reader applies theirs instead of its default. */
const OWN_LIMITS = new WeakMap<object, number>();
/** Requests whose body the host has read from Node's stream, under the limit that applies to them. */
const READ = new WeakSet<object>();

/** The one 413 body, for every limit. */
export const payloadTooLarge = (c: Context) => c.json(new PayloadTooLargeError().toBody(), 413);

/**
 * A route group's own body limit (413 with the one error body). Where it matches, the host's
 * default limit does not apply at all, so the group may accept more (or less) than the default.
 * On Node's server the host reads the body under this limit already; this middleware then
 * only marks the routes (see `ownBodyLimit`).
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler {
  const limit = honoBodyLimit({ maxSize: maxBytes, onError: payloadTooLarge });
  const middleware: MiddlewareHandler = (c, next) => (READ.has(c.req.raw) ? next() : limit(c, next));
  OWN_LIMITS.set(middleware, maxBytes);
  return middleware;
}

function limitOf(handler: unknown): number | undefined {
  // A sub-app with its own error handler wraps its handlers: the limit is on the wrapped one.
  for (let current = handler; typeof current === 'function'; current = composedHandlerOf(current)) {
    const limit = OWN_LIMITS.get(current);
    if (limit !== undefined) return limit;
  }
  return undefined;
}

/** The `bodyLimit` the request's matched routes declare, if any (the smallest when several do). */
export function ownBodyLimit(c: Context): number | undefined {
  let own: number | undefined;
  for (const route of matchedRoutes(c)) {
    const limit = limitOf(route.handler);
    if (limit !== undefined && (own === undefined || limit < own)) own = limit;
  }
  return own;
}

/** Records that the host read this request's body under its limit. */
export function markBodyRead(c: Context): void {
  READ.add(c.req.raw);
}
