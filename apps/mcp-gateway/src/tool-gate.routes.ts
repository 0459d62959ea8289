import { flexibleAuth, type AuthService } from '@agentgw/auth';
import {
  clientGoneSignal,
  errorResponses,
  flexibleSecurity,
  jsonBody,
  jsonResponse,
  openApiApp,
} from '@agentgw/service-kit';
import { riskLevelSchema, toolNameProblem } from '@agentgw/core';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ToolGate } from './tool-gate.js';

/** A tool name the policy can decide: no hidden characters or surrounding whitespace (see `toolNameProblem`). */
const ToolName = z
  .string()
  .max(512)
  .superRefine((name, ctx) => {
    const problem = toolNameProblem(name);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });

const EvaluateBody = z
  .object({
    toolName: ToolName,
    providerId: z.string().min(1).max(200),
    params: z.record(z.string(), z.unknown()).optional().default({}),
  })
  .openapi('ToolGateEvaluateRequest');

const EvaluateAnswer = z
  .object({
    auditId: z.string(),
    decision: z.enum(['allow', 'denied', 'confirmed', 'rejected', 'timeout']),
    risk: riskLevelSchema,
    reason: z
      .string()
      .optional()
      .openapi({ description: 'With `denied`, `rejected` and `timeout` (`Request timed out`)' }),
    confirmedBy: z.string().nullable().optional().openapi({ description: 'With `confirmed`: the user who approved' }),
  })
  .openapi('ToolGateDecision');

const AuditBody = z
  .object({
    auditId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: 'From evaluate; omitted → a new record (then toolName and providerId are required)' }),
    toolName: ToolName.optional(),
    providerId: z.string().min(1).max(200).optional(),
    result: z.record(z.string(), z.unknown()).optional(),
    durationMs: z.number().int().min(0).max(86_400_000).optional(),
    status: z.enum(['completed', 'failed']).optional().openapi({ description: 'Default `completed`' }),
    error: z.string().max(10_000).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.auditId !== undefined) return;
    if (body.toolName === undefined)
      ctx.addIssue({ code: 'custom', path: ['toolName'], message: 'is required when auditId is omitted' });
    if (body.providerId === undefined)
      ctx.addIssue({ code: 'custom', path: ['providerId'], message: 'is required when auditId is omitted' });
  })
  .openapi('ToolGateAuditRequest');

const common = { tags: ['Tool gate'], security: flexibleSecurity };

const evaluateRoute = createRoute({
  ...common,
  method: 'post',
  path: '/evaluate',
  summary: 'Decide a tool call the runtime will make itself (held while a confirmation is pending)',
  description:
    'The same decision as an MCP tools/call: kill switch, provider access, the tool policy as the end user, and for `require_confirmation` a hold until a human decides. An approval token may be sent in `X-Confirmation-Token`.',
  request: { body: jsonBody(EvaluateBody) },
  responses: { 200: jsonResponse(EvaluateAnswer, 'The decision'), ...errorResponses(400, 401, 403, 404) },
});

const auditRoute = createRoute({
  ...common,
  method: 'post',
  path: '/audit',
  summary: 'Complete the audit record of an evaluated call, or record a call that was not evaluated',
  request: { body: jsonBody(AuditBody) },
  responses: {
    200: jsonResponse(z.object({ success: z.literal(true), auditId: z.string() }), 'Recorded (the write is queued)'),
    ...errorResponses(400, 401, 403, 404),
  },
});

/** `POST /api/v1/tool-gate/evaluate` and `/audit`. */
export function toolGateRoutes(deps: { auth: AuthService; toolGate: ToolGate }): OpenAPIHono {
  const app = openApiApp();
  app.use('*', flexibleAuth(deps.auth, { sessionTokens: 'accept' }));
  app.openapi(evaluateRoute, async (c) => {
    const connection = clientGoneSignal(c);
    const answer = await deps.toolGate
      .evaluate(c.var.principal, c.req.valid('json'), {
        signal: connection.signal,
        confirmationToken: c.req.header('x-confirmation-token') ?? null,
        reauthenticate: () => deps.auth.authenticate(c.req.raw.headers, 'flexible'),
      })
      .finally(() => connection.dispose());
    // The caller left while the call was held: nobody reads this.
    if (answer === null) return c.json({ code: 'CLIENT_CLOSED', message: 'The caller went away' }, 400);
    return c.json(answer, 200);
  });
  app.openapi(auditRoute, async (c) => {
    const auditId = await deps.toolGate.audit(c.var.principal, c.req.valid('json'));
    return c.json({ success: true as const, auditId }, 200);
  });
  return app;
}
