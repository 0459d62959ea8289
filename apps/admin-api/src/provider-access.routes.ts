import { jwtAuth, requirePermission } from '@agentgw/auth';
import { createCatalogAdmin, type AccessRule } from '@agentgw/catalog';
import { CONFIRMATION_CARRIERS, POLICY_ACTIONS, RISK_LEVELS } from '@agentgw/core';
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

/**
 * A named schema or null. Not `.nullable()`: that copies the name onto the nullable wrapper, so
 * the shared component itself (RiskLevel, AccessRule) would read as nullable in the document.
 */
const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

const SubjectTypeSchema = z.enum(['user', 'agent']).openapi('SubjectType');
const ActionSchema = z.enum(POLICY_ACTIONS).openapi('PolicyAction');
const RiskLevelSchema = z.enum(RISK_LEVELS).openapi('RiskLevel');
const ConfirmationModeSchema = z.enum(['always', 'never']).openapi('ConfirmationMode');
const ConfirmCarriersSchema = z
  .array(z.enum(CONFIRMATION_CARRIERS).openapi('ConfirmationCarrier'))
  .max(CONFIRMATION_CARRIERS.length)
  .openapi('ConfirmCarriers', {
    description:
      'Where this rule’s held calls may be confirmed; the console always is, `client` (the person’s own MCP client, signed in through the gateway’s OAuth) only when listed. Null: console and push.',
  });

const AccessRuleSchema = z
  .object({
    id: z.string(),
    subjectType: SubjectTypeSchema,
    subjectId: z.string(),
    providerId: z.string(),
    action: ActionSchema,
    toolPattern: z.string(),
    riskLevel: orNull(RiskLevelSchema),
    confirmationMode: orNull(ConfirmationModeSchema),
    confirmCarriers: orNull(ConfirmCarriersSchema),
    description: z.string().nullable(),
    tenantId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('AccessRule');

const fields = {
  subjectId: z.string().trim().min(1).max(200).openapi({ description: 'User id or agent id' }),
  providerId: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .openapi({ description: 'A visible tool provider id, or `*` for every provider' }),
  toolPattern: z.string().trim().min(1).max(200).openapi({ description: 'Tool-name glob', example: 'github_*' }),
  description: z.string().max(2000).nullable(),
};

const CreateAccessRuleBody = z
  .object({
    subjectType: SubjectTypeSchema,
    subjectId: fields.subjectId,
    providerId: fields.providerId,
    action: ActionSchema,
    toolPattern: fields.toolPattern.default('*'),
    riskLevel: orNull(RiskLevelSchema).optional(),
    confirmationMode: orNull(ConfirmationModeSchema).optional(),
    confirmCarriers: orNull(ConfirmCarriersSchema).optional(),
    description: fields.description.optional(),
    tenantId: TenantIdSchema.nullable()
      .optional()
      .openapi({ description: 'Admin only; others are pinned to their own tenant' }),
  })
  .openapi('CreateAccessRuleRequest');

const UpdateAccessRuleBody = z
  .object({
    subjectType: SubjectTypeSchema.optional(),
    subjectId: fields.subjectId.optional(),
    providerId: fields.providerId.optional(),
    action: ActionSchema.optional(),
    toolPattern: fields.toolPattern.optional(),
    riskLevel: orNull(RiskLevelSchema).optional(),
    confirmationMode: orNull(ConfirmationModeSchema).optional(),
    confirmCarriers: orNull(ConfirmCarriersSchema).optional(),
    description: fields.description.optional(),
  })
  .openapi('UpdateAccessRuleRequest');

const ListQuery = z.object({
  subjectType: SubjectTypeSchema.optional(),
  subjectId: z.string().min(1).optional(),
  providerId: z.string().min(1).optional(),
  action: ActionSchema.optional(),
});

const ReplaceAgentRulesBody = z
  .object({
    rules: z
      .array(
        z.object({
          providerId: fields.providerId,
          action: ActionSchema,
          toolPattern: fields.toolPattern.default('*'),
          riskLevel: orNull(RiskLevelSchema).optional(),
        }),
      )
      .max(1000),
  })
  .openapi('ReplaceAgentRulesRequest');

const EvaluateBody = z
  .object({
    userId: z.string().min(1).optional().openapi({ description: 'End user; omitted skips the user-level steps' }),
    agentId: z.string().min(1).optional().openapi({ description: 'Agent; omitted skips the agent-level steps' }),
    providerId: z.string().min(1),
    toolName: z.string().min(1),
  })
  .openapi('EvaluateRequest');

const Decision = z
  .object({ action: ActionSchema, risk: RiskLevelSchema, matchedRule: orNull(AccessRuleSchema) })
  .openapi('PolicyDecision');

const ProviderIdParams = z.object({
  providerId: z
    .string()
    .min(1)
    .openapi({ param: { name: 'providerId', in: 'path' } }),
});
const AgentIdParams = z.object({
  agentId: z
    .string()
    .min(1)
    .openapi({ param: { name: 'agentId', in: 'path' } }),
});

const RuleWritten = z.object({ success: z.literal(true), rule: AccessRuleSchema });
const RulesBody = z.object({ rules: z.array(AccessRuleSchema) });
const common = { tags: ['Provider access'], security: jwtSecurity };
const canRead = requirePermission('provider:read');
const canUpdate = requirePermission('provider:update');

const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/',
  summary: 'List access rules',
  description: 'Visible rules, oldest first. Every filter given must match.',
  middleware: canRead,
  request: { query: ListQuery },
  responses: { 200: jsonResponse(RulesBody, 'Access rules'), ...errorResponses(400, 401, 403) },
});
const byProviderRoute = createRoute({
  ...common,
  method: 'get',
  path: '/by-provider/{providerId}',
  summary: "A provider's rules grouped by tool pattern",
  description: 'Groups are ordered most specific pattern first; `*` as providerId lists the wildcard-provider rules.',
  middleware: canRead,
  request: { params: ProviderIdParams },
  responses: {
    200: jsonResponse(
      z.object({
        providerId: z.string(),
        groups: z.array(z.object({ toolPattern: z.string(), rules: z.array(AccessRuleSchema) })),
      }),
      'Grouped rules',
    ),
    ...errorResponses(401, 403, 404),
  },
});
const getRoute = createRoute({
  ...common,
  method: 'get',
  path: '/{id}',
  summary: 'Get an access rule',
  middleware: canRead,
  request: { params: IdParams },
  responses: {
    200: jsonResponse(z.object({ rule: AccessRuleSchema }), 'Access rule'),
    ...errorResponses(401, 403, 404),
  },
});
const createRuleRoute = createRoute({
  ...common,
  method: 'post',
  path: '/',
  summary: 'Create an access rule',
  middleware: canUpdate,
  request: { body: jsonBody(CreateAccessRuleBody) },
  responses: { 201: jsonResponse(RuleWritten, 'Created'), ...errorResponses(400, 401, 403) },
});
const updateRoute = createRoute({
  ...common,
  method: 'put',
  path: '/{id}',
  summary: 'Update an access rule',
  description: 'Partial: absent fields keep their value.',
  middleware: canUpdate,
  request: { params: IdParams, body: jsonBody(UpdateAccessRuleBody) },
  responses: { 200: jsonResponse(RuleWritten, 'Updated'), ...errorResponses(400, 401, 403, 404) },
});
const deleteRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/{id}',
  summary: 'Delete an access rule',
  middleware: canUpdate,
  request: { params: IdParams },
  responses: { 200: jsonResponse(SuccessBody, 'Deleted'), ...errorResponses(401, 403, 404) },
});
const evaluateRoute = createRoute({
  ...common,
  method: 'post',
  path: '/evaluate',
  summary: 'Dry-run the tool policy',
  description:
    'Order: user deny, user allow, agent deny, agent allow, wildcard-provider rules (deny first), otherwise deny. `require_confirmation` counts as an allow-class rule.',
  middleware: canUpdate,
  request: { body: jsonBody(EvaluateBody) },
  responses: { 200: jsonResponse(Decision, 'Decision'), ...errorResponses(400, 401, 403) },
});
const agentRulesRoute = createRoute({
  ...common,
  method: 'get',
  path: '/agent/{agentId}',
  summary: "List an agent's rules",
  middleware: canUpdate,
  request: { params: AgentIdParams },
  responses: { 200: jsonResponse(RulesBody, "The agent's rules"), ...errorResponses(401, 403, 404) },
});
const replaceAgentRulesRoute = createRoute({
  ...common,
  method: 'put',
  path: '/agent/{agentId}',
  summary: "Replace all of an agent's rules atomically",
  description: 'One invalid rule rejects the whole request (400) and leaves the previous set untouched.',
  middleware: canUpdate,
  request: { params: AgentIdParams, body: jsonBody(ReplaceAgentRulesBody) },
  responses: {
    200: jsonResponse(RulesBody.extend({ success: z.literal(true) }), 'Replaced'),
    ...errorResponses(400, 401, 403, 404),
  },
});

export function providerAccessRoutes(deps: ServiceDeps): OpenAPIHono {
  const { rules } = createCatalogAdmin(deps);
  const logAction = adminActionLog(deps);
  const ruleSubject = (rule: AccessRule, details: Record<string, unknown> = {}) => ({
    providerId: rule.providerId,
    tenantId: rule.tenantId,
    details: { ruleId: rule.id, subjectType: rule.subjectType, subjectId: rule.subjectId, ...details },
  });
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth));
  app.openapi(listRoute, async (c) => c.json({ rules: await rules.list(c.var.principal, c.req.valid('query')) }, 200));
  app.openapi(byProviderRoute, async (c) =>
    c.json(await rules.byProvider(c.var.principal, c.req.valid('param').providerId), 200),
  );
  app.openapi(getRoute, async (c) => c.json({ rule: await rules.show(c.var.principal, c.req.valid('param').id) }, 200));
  app.openapi(createRuleRoute, async (c) => {
    const rule = await rules.create(c.var.principal, c.req.valid('json'));
    await logAction(
      c.var.principal,
      'provider_access_created',
      ruleSubject(rule, { action: rule.action, toolPattern: rule.toolPattern }),
    );
    return c.json({ success: true as const, rule }, 201);
  });
  app.openapi(updateRoute, async (c) => {
    const patch = c.req.valid('json');
    const rule = await rules.update(c.var.principal, c.req.valid('param').id, patch);
    await logAction(c.var.principal, 'provider_access_updated', ruleSubject(rule, { fields: changedFields(patch) }));
    return c.json({ success: true as const, rule }, 200);
  });
  app.openapi(deleteRoute, async (c) => {
    const rule = await rules.show(c.var.principal, c.req.valid('param').id);
    await rules.delete(c.var.principal, rule.id);
    await logAction(c.var.principal, 'provider_access_deleted', ruleSubject(rule));
    return c.json({ success: true as const }, 200);
  });
  app.openapi(evaluateRoute, async (c) => c.json(await rules.evaluate(c.var.principal, c.req.valid('json')), 200));
  app.openapi(agentRulesRoute, async (c) =>
    c.json({ rules: await rules.listForAgent(c.var.principal, c.req.valid('param').agentId) }, 200),
  );
  app.openapi(replaceAgentRulesRoute, async (c) => {
    const replaced = await rules.replaceForAgent(
      c.var.principal,
      c.req.valid('param').agentId,
      c.req.valid('json').rules,
    );
    await logAction(c.var.principal, 'agent_access_replaced', {
      providerId: null,
      tenantId: c.var.principal.tenantId,
      details: { agentId: c.req.valid('param').agentId, ruleIds: replaced.map((rule) => rule.id) },
    });
    return c.json({ success: true as const, rules: replaced }, 200);
  });
  return app;
}
