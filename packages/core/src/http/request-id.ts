import type { MiddlewareHandler } from 'hono';
import { newRequestId } from '../ids.js';

declare module 'hono' {
  interface ContextVariableMap {
    requestId: string;
  }
}

/** Gives every request an id (kept in `c.var.requestId`) for logs and 500 bodies. */
export const requestId = (): MiddlewareHandler => (c, next) => {
  c.set('requestId', newRequestId());
  // Returned, not awaited: nothing follows it, so no frame of its own stays alive per request.
  return next();
};
