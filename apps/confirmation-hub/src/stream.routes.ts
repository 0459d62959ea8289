import { jwtAuth, requestUserToken } from '@agentgw/auth';
import { listPendingVisible, toPayload } from '@agentgw/confirmations';
import {
  errorResponses,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  SSE_HEADERS,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { decodeJwt } from 'jose';
import { parseLastEventId, requiredEventId, sseFrame, type EventStreams } from './event-streams.js';

/** A reconnect's catch-up starts this long before its Last-Event-ID, for clock skew between replicas (clients dedupe by id). */
const REPLAY_SKEW_MS = 5_000;

const streamRoute = createRoute({
  tags: ['Streaming'],
  security: jwtSecurity,
  method: 'get',
  path: '/',
  summary: 'Server-Sent Events: connected, CONFIRMATION_REQUIRED, CONFIRMATION_RESOLVED, heartbeat',
  description:
    'Every event has an `id:`. Reconnecting with `Last-Event-ID` first replays the confirmations still pending that were raised since then. The stream ends when the token that opened it expires, and when its user is changed or deleted (reconnect to authenticate again).',
  responses: {
    200: { description: 'An event stream', content: { 'text/event-stream': { schema: z.string() } } },
    ...errorResponses(401, 403),
  },
});

const pendingRoute = createRoute({
  tags: ['Streaming'],
  security: jwtSecurity,
  method: 'get',
  path: '/pending',
  summary: 'Polling fallback: the pending confirmations the caller would see on the stream',
  responses: {
    200: jsonResponse(z.object({ data: z.array(z.record(z.string(), z.unknown())) }), 'CONFIRMATION_REQUIRED payloads'),
    ...errorResponses(401, 403),
  },
});

/**
 * When the user JWT that authenticated this request (bearer or console cookie) expires. jwtAuth
 * has verified it (and verification requires `exp`), so decoding is enough; a stream must not
 * outlive it.
 */
function tokenExpiry(c: Context): Date {
  const exp = decodeJwt(requestUserToken(c) ?? '').exp;
  if (typeof exp !== 'number') throw new Error('a verified user JWT without exp');
  return new Date(exp * 1000);
}

/** `/api/v1/stream` (SSE) and `/api/v1/stream/pending`; user JWT only. */
export function streamRoutes(deps: ServiceDeps, streams: EventStreams): OpenAPIHono {
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth));
  app.openapi(streamRoute, async (c) => {
    const viewer = c.var.principal;
    const { stream, send } = streams.open(viewer, c.req.raw.signal, tokenExpiry(c));
    const last = parseLastEventId(c.req.header('last-event-id'));
    if (last) {
      // Registered first, then caught up: an event raised meanwhile may arrive twice, never not at all.
      const since = new Date(last.at.getTime() - REPLAY_SKEW_MS);
      try {
        const missed = await listPendingVisible(deps.db, viewer, deps.clock.now(), since);
        for (const row of missed) {
          if (row.id === last.confirmationId) continue;
          const payload = toPayload(row);
          send(sseFrame('CONFIRMATION_REQUIRED', requiredEventId(payload), payload));
        }
      } catch (err) {
        await stream.cancel();
        throw err;
      }
    }
    // The kit's SSE headers: no caching or transforming, and nginx (infra/) must not buffer the stream.
    return c.body(stream, 200, SSE_HEADERS);
  });
  app.openapi(pendingRoute, async (c) => {
    const rows = await listPendingVisible(deps.db, c.var.principal, deps.clock.now());
    return c.json({ data: rows.map(toPayload) }, 200);
  });
  return app;
}
