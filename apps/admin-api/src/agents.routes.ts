import { jwtAuth, requirePermission } from '@agentgw/auth';
import { createCatalogAdmin } from '@agentgw/catalog';
import { assertStoredUrlAllowed, egressPolicyFromConfig, TOOL_SURFACES } from '@agentgw/core';
import {
  IdParams,
  SuccessBody,
  errorResponses,
  jsonBody,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { TenantIdSchema } from './users.routes.js';
import { adminActionLog, changedFields } from './admin-action-log.js';

const RequiredCredential = z
  .object({
    serviceType: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, 'must match ^[a-z][a-z0-9_]*$')
      .max(100),
    description: z.string().max(1000).optional(),
  })
  .openapi('RequiredCredential');

const RequiredCredentials = z
  .array(RequiredCredential)
  .max(50)
  .refine(
    (items) => new Set(items.map((i) => i.serviceType)).size === items.length,
    'serviceType values must be unique',
  );

const AgentSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    upstreamUrl: z.string(),
    hasUpstreamSecret: z.boolean(),
    isActive: z.boolean(),
    requireConfirmation: z.boolean(),
    requiredCredentials: z.array(RequiredCredential),
    runtimeTokenPrefix: z.string(),
    createdAt: z.string(),
  })
  .openapi('AgentSummary');

const ToolSurface = z.enum(TOOL_SURFACES).openapi('ToolSurface', {
  description:
    'What the unified MCP endpoint lists for the agent: every tool it may call (`all`), or only the meta-tools `search_tools` and `call_tool` (`search`). `?tools=` on the endpoint URL overrides it.',
});

const Agent = AgentSummary.extend({
  description: z.string().nullable(),
  toolSurface: ToolSurface,
  tenantId: z.string().nullable(),
  ownerId: z.string().nullable(),
  updatedAt: z.string(),
}).openapi('Agent');

const name = z.string().trim().min(1).max(200);
const upstreamUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048);
const description = z.string().max(2000).nullable();
const upstreamSecret = z.string().min(1).max(4096);

const CreateAgentBody = z
  .object({
    name,
    upstreamUrl,
    upstreamSecret: upstreamSecret.optional().openapi({ description: 'Write-only; sent upstream as a bearer token' }),
    description: description.optional(),
    requireConfirmation: z.boolean().optional(),
    toolSurface: ToolSurface.optional(),
    requiredCredentials: RequiredCredentials.optional(),
    tenantId: TenantIdSchema.nullable()
      .optional()
      .openapi({ description: 'Admin only; others are pinned to their own tenant' }),
  })
  .openapi('CreateAgentRequest');

const UpdateAgentBody = z
  .object({
    name: name.optional(),
    upstreamUrl: upstreamUrl.optional(),
    upstreamSecret: upstreamSecret
      .nullable()
      .optional()
      .openapi({ description: 'A string sets or replaces the secret, null clears it, absent keeps it' }),
    description: description.optional(),
    requireConfirmation: z.boolean().optional(),
    toolSurface: ToolSurface.optional(),
    requiredCredentials: RequiredCredentials.optional(),
  })
  .openapi('UpdateAgentRequest');

const RuntimeToken = z.string().openapi({ description: '`art_…`, shown only in this response' });
const AgentWritten = z.object({ success: z.literal(true), agent: Agent });

const common = { tags: ['Agents'], security: jwtSecurity };
const canUpdate = ['agent:update:own', 'agent:update:all'] as const;
const canDelete = ['agent:delete:own', 'agent:delete:all'] as const;
const notVisible = 'Agents of other tenants, and for agent_creator agents of other users, answer 404.';

const createAgentRoute = createRoute({
  ...common,
  method: 'post',
  path: '/',
  summary: 'Create an agent',
  middleware: requirePermission('agent:create'),
  request: { body: jsonBody(CreateAgentBody) },
  responses: {
    201: jsonResponse(
      z.object({ success: z.literal(true), agent: AgentSummary, runtime_token: RuntimeToken }),
      'Created',
    ),
    ...errorResponses(400, 401, 403),
  },
});
const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/',
  summary: 'List agents',
  description: notVisible,
  middleware: requirePermission('agent:read'),
  responses: { 200: jsonResponse(z.object({ agents: z.array(Agent) }), 'Agents'), ...errorResponses(401, 403) },
});
const getRoute = createRoute({
  ...common,
  method: 'get',
  path: '/{id}',
  summary: 'Get an agent',
  description: notVisible,
  middleware: requirePermission('agent:read'),
  request: { params: IdParams },
  responses: { 200: jsonResponse(z.object({ agent: Agent }), 'Agent'), ...errorResponses(401, 403, 404) },
});
const updateRoute = createRoute({
  ...common,
  method: 'put',
  path: '/{id}',
  summary: 'Update an agent',
  middleware: requirePermission(...canUpdate),
  request: { params: IdParams, body: jsonBody(UpdateAgentBody) },
  responses: { 200: jsonResponse(AgentWritten, 'Updated'), ...errorResponses(400, 401, 403, 404) },
});
const deleteRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/{id}',
  summary: 'Delete an agent and its access rules',
  middleware: requirePermission(...canDelete),
  request: { params: IdParams },
  responses: { 200: jsonResponse(SuccessBody, 'Deleted'), ...errorResponses(401, 403, 404) },
});
const disableRoute = createRoute({
  ...common,
  method: 'post',
  path: '/{id}/disable',
  summary: 'Disable an agent (kill switch)',
  middleware: requirePermission(...canUpdate),
  request: { params: IdParams },
  responses: { 200: jsonResponse(AgentWritten, 'Disabled'), ...errorResponses(401, 403, 404) },
});
const enableRoute = createRoute({
  ...common,
  method: 'post',
  path: '/{id}/enable',
  summary: 'Enable an agent',
  middleware: requirePermission(...canUpdate),
  request: { params: IdParams },
  responses: { 200: jsonResponse(AgentWritten, 'Enabled'), ...errorResponses(401, 403, 404) },
});
const regenerateRoute = createRoute({
  ...common,
  method: 'post',
  path: '/{id}/regenerate-token',
  summary: 'Rotate the runtime token; the old one stops working at once',
  middleware: requirePermission(...canUpdate),
  request: { params: IdParams },
  responses: {
    200: jsonResponse(z.object({ success: z.literal(true), runtime_token: RuntimeToken }), 'Rotated'),
    ...errorResponses(401, 403, 404),
  },
});

/** `/api/v1/admin/agents`: agent registration and the kill switch (admins and agent creators). */
export function agentAdminRoutes(deps: ServiceDeps): OpenAPIHono {
  const { agents } = createCatalogAdmin(deps);
  // Write-time egress check (metadata names, forbidden literal IPs → 400); connect time is the guarantee.
  const egress = egressPolicyFromConfig(deps.config);
  const logAction = adminActionLog(deps);
  const agentSubject = (agent: { id: string; tenantId: string | null }, details: Record<string, unknown> = {}) => ({
    providerId: null,
    tenantId: agent.tenantId,
    details: { agentId: agent.id, ...details },
  });
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth));
  app.openapi(createAgentRoute, async (c) => {
    const body = c.req.valid('json');
    assertStoredUrlAllowed(egress, body.upstreamUrl, 'upstreamUrl');
    const { agent, runtimeToken } = await agents.create(c.var.principal, body);
    // The summary a create answers has no tenant: the stored agent does.
    const stored = await agents.show(c.var.principal, agent.id);
    await logAction(c.var.principal, 'agent_created', agentSubject(stored, { name: agent.name }));
    return c.json({ success: true as const, agent, runtime_token: runtimeToken }, 201);
  });
  app.openapi(listRoute, async (c) => c.json({ agents: await agents.list(c.var.principal) }, 200));
  app.openapi(getRoute, async (c) =>
    c.json({ agent: await agents.show(c.var.principal, c.req.valid('param').id) }, 200),
  );
  app.openapi(updateRoute, async (c) => {
    const patch = c.req.valid('json');
    if (patch.upstreamUrl !== undefined) assertStoredUrlAllowed(egress, patch.upstreamUrl, 'upstreamUrl');
    const agent = await agents.update(c.var.principal, c.req.valid('param').id, patch);
    await logAction(c.var.principal, 'agent_updated', agentSubject(agent, { fields: changedFields(patch) }));
    return c.json({ success: true as const, agent }, 200);
  });
  app.openapi(deleteRoute, async (c) => {
    const agent = await agents.show(c.var.principal, c.req.valid('param').id);
    await agents.delete(c.var.principal, agent.id);
    await logAction(c.var.principal, 'agent_deleted', agentSubject(agent, { name: agent.name }));
    return c.json({ success: true as const }, 200);
  });
  app.openapi(disableRoute, async (c) => {
    const agent = await agents.setActive(c.var.principal, c.req.valid('param').id, false);
    await logAction(c.var.principal, 'agent_disabled', agentSubject(agent));
    return c.json({ success: true as const, agent }, 200);
  });
  app.openapi(enableRoute, async (c) => {
    const agent = await agents.setActive(c.var.principal, c.req.valid('param').id, true);
    await logAction(c.var.principal, 'agent_enabled', agentSubject(agent));
    return c.json({ success: true as const, agent }, 200);
  });
  app.openapi(regenerateRoute, async (c) => {
    const { id } = c.req.valid('param');
    const runtimeToken = await agents.regenerateToken(c.var.principal, id);
    await logAction(c.var.principal, 'agent_token_regenerated', agentSubject(await agents.show(c.var.principal, id)));
    return c.json({ success: true as const, runtime_token: runtimeToken }, 200);
  });
  return app;
}
