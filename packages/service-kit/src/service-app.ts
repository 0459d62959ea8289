import { errorHandler, notFoundHandler, PayloadTooLargeError, requestId, type Logger } from '@agentgw/core';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DEFAULT_MAX_BODY_BYTES } from './body-limit.js';

/**
 * Superseded by `createHost` (which adds this shell once per process); kept while the
 * mcp-gateway, confirmation-hub and audit-writer apps still build their old `createApp`.
 * The Hono every service started from: request ids, the one error body, JSON 404s and a body
 * size limit (413 with the error body, checked before any handler reads the body).
 */
export function createServiceApp(options: { logger?: Logger; maxBodyBytes?: number } = {}): Hono {
  const app = new Hono();
  app.use(requestId());
  app.use(
    bodyLimit({
      maxSize: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      onError: (c) => c.json(new PayloadTooLargeError().toBody(), 413),
    }),
  );
  app.onError(errorHandler(options.logger));
  app.notFound(notFoundHandler);
  return app;
}
