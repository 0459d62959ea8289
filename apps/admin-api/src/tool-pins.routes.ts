import type { AuditTrail } from '@agentgw/audit';
import { jwtAuth, requirePermission, type Principal } from '@agentgw/auth';
import { createToolPinAdmin, type ToolPin } from '@agentgw/catalog';
import { TOOL_PIN_STATUSES, TOOL_PINNING_MODES } from '@agentgw/core';
import {
  IdParams,
  errorResponses,
  jsonBody,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { adminActionLog, type AdminActionLog } from './admin-action-log.js';
import { definitionDiff } from './tool-pin-diff.js';

const PinningSchema = z.enum(TOOL_PINNING_MODES).openapi('ToolPinningMode', {
  description:
    '`off`: no pins; `first_sight`: a tool is pinned the first time it is listed; `approval`: a new tool is quarantined until an admin approves it. A changed definition is quarantined in both pinning modes.',
});
const StatusSchema = z.enum(TOOL_PIN_STATUSES).openapi('ToolPinStatus', {
  description:
    '`pinned`: served; `new`: never approved; `changed`: differs from its pin; `blocked`: kept quarantined by an admin',
});
const DefinitionSchema = z.record(z.string(), z.unknown()).openapi('ToolDefinition', {
  description: 'name, description, inputSchema, outputSchema, annotations as the upstream listed them',
});
const PinnedDefinitionSchema = z
  .object({ hash: z.string(), definition: DefinitionSchema })
  .openapi('PinnedToolDefinition');
const DiffLineSchema = z
  .object({ op: z.enum(['same', 'removed', 'added']), text: z.string() })
  .openapi('DefinitionDiffLine');

const ToolPinSchema = z
  .object({
    providerId: z.string(),
    providerName: z.string(),
    tenantId: z.string().nullable(),
    toolName: z.string(),
    status: StatusSchema,
    pinned: z.union([PinnedDefinitionSchema, z.null()]),
    pending: z.union([PinnedDefinitionSchema.extend({ firstSeenAt: z.string() }), z.null()]),
    renamedFrom: z.string().nullable().openapi({
      description: 'A pinned tool of the same definition (minus the name) that the provider no longer lists',
    }),
    approvedBy: z.string().nullable(),
    approvedAt: z.string().nullable(),
    updatedAt: z.string(),
    diff: z.array(DiffLineSchema).openapi({
      description:
        'Line diff of the pinned definition (empty if none) against the quarantined one (canonical JSON, keys sorted); empty when nothing is pending',
    }),
  })
  .openapi('ToolPin');

const ProviderPinningSchema = z
  .object({ providerId: z.string(), providerName: z.string(), tenantId: z.string().nullable(), pinning: PinningSchema })
  .openapi('ProviderPinning');

const ListQuery = z.object({
  state: z
    .enum(['quarantined', 'all'])
    .default('quarantined')
    .openapi({ description: 'Quarantined pins only (new, changed, blocked), or every pin' }),
  providerId: z.string().trim().min(1).max(200).optional(),
});
const ReviewBody = z
  .object({
    providerId: z.string().trim().min(1).max(200),
    toolName: z.string().min(1).max(512),
    hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 hex digest')
      .openapi({ description: 'The `pending.hash` the reviewer saw: a definition that changed again since is a 409' }),
  })
  .openapi('ToolPinReview');
const ModeBody = z.object({ pinning: PinningSchema }).openapi('SetToolPinningRequest');

const common = { tags: ['Tool pins'], security: jwtSecurity };
const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/',
  summary: 'List pinned and quarantined tool definitions',
  description:
    'Tools of visible providers whose definition waits for review (default), or every pin, each with the pinned and the quarantined definition and their diff.',
  middleware: requirePermission('provider:read'),
  request: { query: ListQuery },
  responses: {
    200: jsonResponse(z.object({ pins: z.array(ToolPinSchema) }), 'Tool pins'),
    ...errorResponses(400, 401, 403),
  },
});
const modesRoute = createRoute({
  ...common,
  method: 'get',
  path: '/providers',
  summary: "Each visible provider's pinning mode",
  middleware: requirePermission('provider:read'),
  responses: {
    200: jsonResponse(z.object({ providers: z.array(ProviderPinningSchema) }), 'Pinning modes'),
    ...errorResponses(401, 403),
  },
});
const setModeRoute = createRoute({
  ...common,
  method: 'put',
  path: '/providers/{id}',
  summary: "Set a provider's pinning mode",
  middleware: requirePermission('provider:update'),
  request: { params: IdParams, body: jsonBody(ModeBody) },
  responses: {
    200: jsonResponse(z.object({ provider: ProviderPinningSchema }), 'Updated'),
    ...errorResponses(400, 401, 403, 404),
  },
});
const reviewRoute = (action: 'approve' | 'block') =>
  createRoute({
    ...common,
    method: 'post',
    path: `/${action}`,
    summary:
      action === 'approve'
        ? 'Approve a quarantined definition (pin it: listed and callable again)'
        : 'Keep a quarantined definition blocked',
    middleware: requirePermission('provider:update'),
    request: { body: jsonBody(ReviewBody) },
    responses: {
      200: jsonResponse(z.object({ pin: ToolPinSchema }), action === 'approve' ? 'Approved' : 'Blocked'),
      ...errorResponses(400, 401, 403, 404, 409),
    },
  });

/** A pin with its diff, as the API answers it. */
const pinView = (pin: ToolPin) => ({
  ...pin,
  diff: pin.pending ? definitionDiff(pin.pinned?.definition ?? null, pin.pending.definition) : [],
});

/** An admin's decision on a definition goes to the audit log beside the tool's calls (the gateway audits the detection). */
function auditReview(
  logAction: AdminActionLog,
  principal: Principal,
  pin: ToolPin,
  outcome: 'approved' | 'blocked',
): Promise<void> {
  return logAction(principal, outcome === 'approved' ? 'tool_definition_approved' : 'tool_definition_blocked', {
    providerId: pin.providerId,
    tenantId: pin.tenantId,
    details: { toolName: pin.toolName, hash: outcome === 'approved' ? pin.pinned?.hash : pin.pending?.hash },
  });
}

/** `/api/v1/admin/tool-pins`: review quarantined tool definitions (issue 24.3) and set each provider's pinning mode. */
export function toolPinsRoutes(deps: ServiceDeps, options: { audit?: AuditTrail } = {}): OpenAPIHono {
  const pins = createToolPinAdmin(deps);
  const logAction = adminActionLog(deps, options.audit);
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth));
  app.openapi(listRoute, async (c) => {
    const { state, providerId } = c.req.valid('query');
    const listed = await pins.list(c.var.principal, { state, providerId: providerId ?? null });
    return c.json({ pins: listed.map(pinView) }, 200);
  });
  app.openapi(modesRoute, async (c) => c.json({ providers: await pins.modes(c.var.principal) }, 200));
  app.openapi(setModeRoute, async (c) => {
    const provider = await pins.setMode(c.var.principal, c.req.valid('param').id, c.req.valid('json').pinning);
    await logAction(c.var.principal, 'tool_pinning_set', {
      providerId: provider.providerId,
      tenantId: provider.tenantId,
      details: { pinning: provider.pinning },
    });
    return c.json({ provider }, 200);
  });
  for (const action of ['approve', 'block'] as const) {
    app.openapi(reviewRoute(action), async (c) => {
      const { providerId, toolName, hash } = c.req.valid('json');
      const pin = await pins[action](c.var.principal, providerId, { toolName, hash });
      await auditReview(logAction, c.var.principal, pin, action === 'approve' ? 'approved' : 'blocked');
      return c.json({ pin: pinView(pin) }, 200);
    });
  }
  return app;
}
