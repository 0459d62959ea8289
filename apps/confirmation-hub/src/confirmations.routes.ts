import { flexibleAuth } from '@agentgw/auth';
import { CONFIRMATION_STATUSES, riskLevelSchema } from '@agentgw/core';
import {
  answerConfirmation,
  getVisibleConfirmation,
  listPendingVisible,
  listVisible,
  toConfirmation,
  type AnswerResult,
} from '@agentgw/confirmations';
import {
  errorResponses,
  flexibleSecurity,
  IdParams,
  jsonResponse,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';

const Status = z.enum(CONFIRMATION_STATUSES).openapi('ConfirmationStatus');

const ConfirmationSchema = z
  .object({
    id: z.string(),
    status: Status,
    tool: z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()) }),
    risk: z.object({ level: riskLevelSchema }),
    providerId: z.string().nullable(),
    agentId: z.string().nullable(),
    userId: z.string().nullable().openapi({ description: 'The user whose call is held' }),
    endUserId: z.string().nullable().openapi({ description: 'The end user the call is made for (the confirmer)' }),
    tenantId: z.string().nullable(),
    timestamp: z.string().openapi({ description: 'When the confirmation was raised' }),
    expiresAt: z.string().openapi({ description: 'When it times out unless decided' }),
    reason: z.string().nullable(),
    decidedBy: z.string().nullable(),
    decidedAt: z.string().nullable(),
  })
  .openapi('Confirmation');

const Answered = z
  .object({
    success: z.literal(true),
    data: ConfirmationSchema,
    confirmation_token: z.string().optional().openapi({
      description:
        'Confirming answers whose held caller went away only (a call still held is released by the answer itself): single-use approval of exactly this call (agent, end user, provider, tool, arguments)',
    }),
    expiresIn: z.number().int().optional().openapi({ description: 'Lifetime of confirmation_token in seconds' }),
  })
  .openapi('ConfirmationAnswer');

const Reason = z.string().trim().min(1).max(1000);
const RespondBody = z
  .object({ confirmed: z.boolean(), reason: Reason.optional() })
  .strict()
  .openapi('ConfirmationRespond');
const ShortcutBody = z.object({ reason: Reason.optional() }).strict().openapi('ConfirmationShortcut');

const ListQuery = z.object({
  status: Status.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

const common = { tags: ['Confirmations'], security: flexibleSecurity };
const answerErrors = errorResponses(400, 401, 403, 404, 409);

const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/list',
  summary: 'Confirmations the caller may see, newest first; filter by status',
  request: { query: ListQuery },
  responses: {
    200: jsonResponse(
      z.object({
        data: z.array(ConfirmationSchema),
        pagination: z.object({ limit: z.number(), offset: z.number(), total: z.number() }),
      }),
      'Confirmations',
    ),
    ...errorResponses(400, 401, 403),
  },
});
const pendingRoute = createRoute({
  ...common,
  method: 'get',
  path: '/pending',
  summary: 'Pending confirmations the caller may answer, oldest first',
  responses: {
    200: jsonResponse(z.object({ data: z.array(ConfirmationSchema) }), 'Pending confirmations'),
    ...errorResponses(401, 403),
  },
});
const getRoute = createRoute({
  ...common,
  method: 'get',
  path: '/{id}',
  summary: 'One confirmation by request id',
  request: { params: IdParams },
  responses: {
    200: jsonResponse(z.object({ data: ConfirmationSchema }), 'The confirmation'),
    ...errorResponses(401, 403, 404),
  },
});
const respondRoute = createRoute({
  ...common,
  method: 'post',
  path: '/{id}/respond',
  summary: 'Confirm or reject a pending confirmation',
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: RespondBody } } } },
  responses: { 200: jsonResponse(Answered, 'Applied'), ...answerErrors },
});
const shortcut = (path: '/{id}/confirm' | '/{id}/reject', summary: string) =>
  createRoute({
    ...common,
    method: 'post',
    path,
    summary,
    request: { params: IdParams, body: { required: false, content: { 'application/json': { schema: ShortcutBody } } } },
    responses: { 200: jsonResponse(Answered, 'Applied'), ...answerErrors },
  });
const confirmRoute = shortcut('/{id}/confirm', 'Confirm a pending confirmation (body optional: `{ reason }`)');
const rejectRoute = shortcut('/{id}/reject', 'Reject a pending confirmation (body optional: `{ reason }`)');

function answered(result: AnswerResult) {
  const token = result.confirmationToken;
  return {
    success: true as const,
    data: result.confirmation,
    ...(token ? { confirmation_token: token.token, expiresIn: token.expiresIn } : {}),
  };
}

/** `/api/v1/confirmation/*`: list, pending, get and the three ways to answer; flexible auth. */
export function confirmationRoutes(deps: ServiceDeps): OpenAPIHono {
  const app = openApiApp();
  app.use('*', flexibleAuth(deps.auth));
  app.openapi(listRoute, async (c) => {
    const query = c.req.valid('query');
    const { rows, total } = await listVisible(deps.db, c.var.principal, query);
    return c.json(
      { data: rows.map(toConfirmation), pagination: { limit: query.limit, offset: query.offset, total } },
      200,
    );
  });
  app.openapi(pendingRoute, async (c) => {
    const rows = await listPendingVisible(deps.db, c.var.principal, deps.clock.now());
    return c.json({ data: rows.map(toConfirmation) }, 200);
  });
  app.openapi(getRoute, async (c) =>
    c.json({ data: await getVisibleConfirmation(deps.db, c.var.principal, c.req.valid('param').id) }, 200),
  );
  app.openapi(respondRoute, async (c) => {
    const result = await answerConfirmation(deps, c.var.principal, c.req.valid('param').id, c.req.valid('json'));
    return c.json(answered(result), 200);
  });
  app.openapi(confirmRoute, async (c) => {
    const { reason } = c.req.valid('json') ?? {};
    return c.json(
      answered(await answerConfirmation(deps, c.var.principal, c.req.valid('param').id, { confirmed: true, reason })),
      200,
    );
  });
  app.openapi(rejectRoute, async (c) => {
    const { reason } = c.req.valid('json') ?? {};
    return c.json(
      answered(await answerConfirmation(deps, c.var.principal, c.req.valid('param').id, { confirmed: false, reason })),
      200,
    );
  });
  return app;
}
