import { IDENTITY_EVENT_TYPES } from '@agentgw/audit';
import { ValidationError } from '@agentgw/core';
import { errorResponses, jsonResponse, jwtSecurity, openApiApp } from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { identityEventScopeOf, listIdentityEvents, parseCursor } from './identity-event-query.js';

/** Page size when `limit` is absent, and the largest accepted. */
export const DEFAULT_EVENTS_LIMIT = 50;
export const MAX_EVENTS_LIMIT = 200;

const At = z.iso.datetime({ offset: true }).transform((raw) => new Date(raw));

const EventsQuery = z.object({
  type: z.enum(IDENTITY_EVENT_TYPES).optional().openapi({ description: 'Only events of this type' }),
  user_id: z.string().min(1).max(200).optional().openapi({ description: 'Only events concerning this user' }),
  since: At.optional().openapi({ type: 'string', description: 'Inclusive; ISO 8601 date-time with Z or an offset' }),
  until: At.optional().openapi({ type: 'string', description: 'Exclusive; ISO 8601 date-time with Z or an offset' }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_EVENTS_LIMIT)
    .default(DEFAULT_EVENTS_LIMIT)
    .openapi({ description: `Default ${DEFAULT_EVENTS_LIMIT}, at most ${MAX_EVENTS_LIMIT}` }),
  cursor: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .openapi({ description: '`next` of the previous page; absent for the newest events' }),
});

const IdentityEvent = z
  .object({
    id: z.string(),
    type: z.string().openapi({ description: `One of ${IDENTITY_EVENT_TYPES.join(', ')}` }),
    actorId: z
      .string()
      .nullable()
      .openapi({ description: 'The user who acted; null when a client or the gateway did (then `details.by` says)' }),
    userId: z.string().nullable().openapi({ description: 'The user whose sign-in, grant or connection it concerns' }),
    tenantId: z.string().nullable(),
    clientId: z.string().nullable().openapi({ description: "The gateway's OAuth client involved, if any" }),
    details: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'What the event says beside (never a token: secret-named fields masked)' }),
    createdAt: z.string(),
  })
  .openapi('IdentityEvent');

const EventsPage = z.object({
  data: z.array(IdentityEvent),
  next: z.string().nullable().openapi({ description: 'The cursor of the next (older) page; null on the last' }),
});

const listRoute = createRoute({
  tags: ['Audit'],
  security: jwtSecurity,
  method: 'get',
  path: '/api/v1/audit/identity-events',
  summary: 'Identity events (sign-ins, consents, grants, connected accounts, token exchanges), newest first',
  description:
    'Admins see every event; tenant admins the events of their tenant; anyone else is refused (403). Cursor-paginated.',
  request: { query: EventsQuery },
  responses: { 200: jsonResponse(EventsPage, 'A page of events'), ...errorResponses(400, 401, 403) },
});

/** GET /api/v1/audit/identity-events (behind the audit API's user JWT): what an operator reconstructs of sign-ins and connections. */
export function identityEventsRoutes(deps: { db: Kysely<Database> }): OpenAPIHono {
  const app = openApiApp();
  app.openapi(listRoute, async (c) => {
    const scope = identityEventScopeOf(c.var.principal);
    const { type, user_id: userId, since, until, limit, cursor } = c.req.valid('query');
    if (since && until && since >= until) throw new ValidationError('since: must be before until', { field: 'since' });
    const page = await listIdentityEvents(
      deps.db,
      scope,
      { type, userId, since, until },
      { limit, cursor: cursor === undefined ? null : parseCursor(cursor) },
    );
    return c.json(page, 200);
  });
  return app;
}
