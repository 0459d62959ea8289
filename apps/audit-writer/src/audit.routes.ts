import { jwtAuth, requireRole } from '@agentgw/auth';
import { AUDIT_STATUSES, CONFIRMATION_CARRIERS, NotFoundError, ValidationError } from '@agentgw/core';
import {
  errorResponses,
  IdParams,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { AUDIT_QUEUES } from './audit-consumer.js';
import { auditStats, exportEntries, getEntry, listEntries, visibleFilter, type AuditFilter } from './audit-query.js';
import { identityEventsRoutes } from './identity-events.routes.js';

/** Page size when `limit` is absent, and the largest accepted. */
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;
/** Deeper pages cost a scan of everything before them: use filters or the export beyond this. */
export const MAX_OFFSET = 100_000;

/**
 * Read-your-writes bound: how long a query waits for the audit records enqueued before it began
 * (every call acknowledged before it) to be written. Past it, or at once when such a record is
 * retrying after a failed write, it answers with what is written and says so in STALE_HEADER.
 */
export const READ_BARRIER_MS = 1500;
export const STALE_HEADER = 'X-Audit-Stale';

const DAY_MS = 86_400_000;
const isoDateTime = z.iso.datetime({ offset: true });

/** `YYYY-MM-DD` (a whole UTC day) or an ISO 8601 date-time with Z or an offset. */
const DateParam = z
  .string()
  .max(40)
  .transform((raw, ctx) => {
    if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) {
      const at = new Date(`${raw}T00:00:00.000Z`);
      if (!Number.isNaN(at.getTime()) && at.toISOString().startsWith(raw)) return { at, wholeDay: true };
    } else if (isoDateTime.safeParse(raw).success) {
      return { at: new Date(raw), wholeDay: false };
    }
    ctx.addIssue({
      code: 'custom',
      message: 'must be an ISO date (YYYY-MM-DD) or date-time (e.g. 2026-01-31T12:00:00Z)',
    });
    return z.NEVER;
  });

const id = z.string().min(1).max(200);
const Status = z.enum(AUDIT_STATUSES).openapi('AuditStatus');

const FilterQuery = z.object({
  user_id: id.optional().openapi({
    description:
      'Honoured for admins (and tenant admins within their tenant); everyone else sees only their own entries',
  }),
  agent_id: id.optional(),
  tenant_id: id.optional().openapi({ description: 'Tenant admins are always limited to their own tenant' }),
  tool_name: z.string().min(1).max(512).optional(),
  status: Status.optional(),
  start_date: DateParam.optional().openapi({ type: 'string', description: 'Inclusive; YYYY-MM-DD or ISO date-time' }),
  end_date: DateParam.optional().openapi({
    type: 'string',
    description: 'Inclusive; YYYY-MM-DD covers that whole UTC day',
  }),
});

const PageQuery = FilterQuery.extend({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .default(DEFAULT_LIMIT)
    .openapi({ description: `Default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}` }),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_OFFSET)
    .default(0)
    .openapi({ description: `At most ${MAX_OFFSET}` }),
});

const AuditEntry = z
  .object({
    id: z.string(),
    userId: z.string().nullable(),
    agentId: z.string().nullable(),
    endUserId: z.string().nullable(),
    providerId: z.string().nullable(),
    tenantId: z.string().nullable(),
    oauthClientId: z
      .string()
      .nullable()
      .openapi({ description: 'The OAuth client (MCP app) the user signed in with; null for any other credential' }),
    toolName: z.string(),
    arguments: z.unknown().openapi({ description: 'Secret-named fields masked, capped at 16 KiB' }),
    result: z.unknown(),
    status: Status,
    duration: z.number().int().nullable().openapi({ description: 'Milliseconds' }),
    confirmedBy: z.string().nullable(),
    decidedVia: z
      .object({ carrier: z.enum(CONFIRMATION_CARRIERS), clientId: z.string().nullable() })
      .nullable()
      .openapi({
        description:
          'A held call’s: the carrier its confirmation was answered through, and the OAuth client that answered from the person’s own MCP client; null when nobody answered',
      }),
    error: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('AuditEntry');

const AuditPage = z.object({
  data: z.array(AuditEntry),
  pagination: z.object({
    limit: z.number().int(),
    offset: z.number().int(),
    total: z.number().int().openapi({ description: 'Size of the whole filtered set' }),
  }),
});

const AuditStats = z.object({
  data: z.object({
    total: z.number().int(),
    byStatus: z.record(Status, z.number().int()),
    avgDuration: z.number().nullable().openapi({ description: 'Mean duration in ms of the entries that have one' }),
  }),
});

const common = { tags: ['Audit'], security: jwtSecurity };
const visibility =
  'Admins see every entry; tenant admins every entry of their tenant; everyone else only their own. ' +
  `Every call acknowledged before the query is included (read-your-writes); when that could not be made sure within ${READ_BARRIER_MS} ms, the answer carries \`${STALE_HEADER}: true\`.`;

const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/api/v1/audit/logs',
  summary: 'Query the audit log, newest first',
  description: visibility,
  request: { query: PageQuery },
  responses: { 200: jsonResponse(AuditPage, 'A page of entries'), ...errorResponses(400, 401) },
});
const getRoute = createRoute({
  ...common,
  method: 'get',
  path: '/api/v1/audit/logs/{id}',
  summary: 'Get one audit entry',
  description: `${visibility} An entry the caller may not see answers 404.`,
  request: { params: IdParams },
  responses: { 200: jsonResponse(z.object({ data: AuditEntry }), 'The entry'), ...errorResponses(401, 404) },
});
const statsRoute = createRoute({
  ...common,
  method: 'get',
  path: '/api/v1/audit/stats',
  summary: 'Aggregate statistics of the (filtered) audit log',
  description: `Requires the admin role. Read-your-writes as the logs (\`${STALE_HEADER}: true\` when not made sure).`,
  middleware: requireRole('admin'),
  request: { query: FilterQuery },
  responses: { 200: jsonResponse(AuditStats, 'Statistics'), ...errorResponses(400, 401, 403) },
});
const exportRoute = createRoute({
  ...common,
  method: 'get',
  path: '/api/v1/audit/export',
  summary: 'Export the (filtered) audit log as NDJSON, streamed',
  description: `${visibility} One entry per line, newest first; no page limit.`,
  request: { query: FilterQuery },
  responses: {
    200: { description: 'NDJSON', content: { 'application/x-ndjson': { schema: z.string() } } },
    ...errorResponses(400, 401),
  },
});

type FilterParams = z.infer<typeof FilterQuery>;

/** Query parameters to a filter; the end date is inclusive (a whole day for YYYY-MM-DD). */
function toFilter(q: FilterParams): AuditFilter {
  const before = q.end_date && new Date(q.end_date.at.getTime() + (q.end_date.wholeDay ? DAY_MS : 1));
  if (q.start_date && before && q.start_date.at >= before) {
    throw new ValidationError('start_date: must not be after end_date', { field: 'start_date' });
  }
  return {
    userId: q.user_id,
    agentId: q.agent_id,
    tenantId: q.tenant_id,
    toolName: q.tool_name,
    status: q.status,
    from: q.start_date?.at,
    before,
  };
}

/** Waits (bounded) until the calls acknowledged before this query are written; marks the answer when some may be missing. */
async function awaitAcknowledgedCalls(c: Context, deps: Pick<ServiceDeps, 'queue' | 'logger'>): Promise<void> {
  const written = await deps.queue.barrier(AUDIT_QUEUES, READ_BARRIER_MS).catch((err: unknown) => {
    // The queue unreachable: what is written is still worth answering, marked as possibly incomplete.
    deps.logger.warn({ reason: err instanceof Error ? err.message : String(err) }, 'audit read barrier failed');
    return false;
  });
  if (!written) c.header(STALE_HEADER, 'true');
}

/** GET /api/v1/audit/logs, /logs/:id, /stats, /export and /identity-events, behind a user JWT. */
export function auditRoutes(deps: ServiceDeps): OpenAPIHono {
  const app = openApiApp();
  app.use('/api/v1/audit/*', jwtAuth(deps.auth));
  app.route('/', identityEventsRoutes(deps));

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const page = { limit: q.limit, offset: q.offset };
    const filter = visibleFilter(c.var.principal, toFilter(q));
    await awaitAcknowledgedCalls(c, deps);
    const { data, total } = await listEntries(deps.db, filter, page);
    return c.json({ data, pagination: { ...page, total } }, 200);
  });

  app.openapi(getRoute, async (c) => {
    await awaitAcknowledgedCalls(c, deps);
    const entry = await getEntry(deps.db, visibleFilter(c.var.principal, {}), c.req.valid('param').id);
    if (!entry) throw new NotFoundError('Audit entry');
    return c.json({ data: entry }, 200);
  });

  app.openapi(statsRoute, async (c) => {
    const filter = visibleFilter(c.var.principal, toFilter(c.req.valid('query')));
    await awaitAcknowledgedCalls(c, deps);
    return c.json({ data: await auditStats(deps.db, filter) }, 200);
  });

  app.openapi(exportRoute, async (c) => {
    const filter = visibleFilter(c.var.principal, toFilter(c.req.valid('query')));
    await awaitAcknowledgedCalls(c, deps);
    const entries = exportEntries(deps.db, filter);
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          // Up to a page's worth of lines per chunk keeps writes few without buffering the set.
          let text = '';
          for (let i = 0; i < 200; i++) {
            const next = await entries.next();
            if (next.done) {
              if (text) controller.enqueue(encoder.encode(text));
              controller.close();
              return;
            }
            text += `${JSON.stringify(next.value)}\n`;
          }
          controller.enqueue(encoder.encode(text));
        } catch (err) {
          // Headers are gone: cutting the stream is the only honest signal left.
          deps.logger.error({ err }, 'audit export failed mid-stream');
          controller.error(err);
        }
      },
      async cancel() {
        await entries.return(undefined);
      },
    });
    return c.body(body, 200, {
      'Content-Type': 'application/x-ndjson; charset=utf-8',
      'Content-Disposition': 'attachment; filename="audit-log.ndjson"',
      'Cache-Control': 'no-store',
    }) as never;
  });

  return app;
}
