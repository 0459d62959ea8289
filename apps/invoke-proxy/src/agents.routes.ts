import { flexibleAuth, tenantScope } from '@agentgw/auth';
import type { AgentRecord } from '@agentgw/catalog';
import { parseJson, requestHeaders } from '@agentgw/core';
import {
  answerHeader,
  bodyLimit,
  clientGoneSignal,
  documentedJsonBody,
  errorResponses,
  flexibleSecurity,
  jsonResponse,
  openApiApp,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { actingUser, invokeAgent, invokeResponse, type InvokeDeps } from './invoke.js';
import { resolveRequiredCredentials } from './required-credentials.js';

/** The invoke body: a JSON object with a `message` string; every other field travels on too. */
const invokeBody = z.looseObject({ message: z.string({ error: 'is required and must be a string' }) });

/** `/:agentId`; any string (an unknown id is the handler's 404). */
const AgentIdParams = z.object({ agentId: z.string().openapi({ param: { name: 'agentId', in: 'path' } }) });

const PublicAgent = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    isActive: z.boolean(),
    requireConfirmation: z.boolean(),
    requiredCredentials: z.array(z.object({ serviceType: z.string(), description: z.string().optional() })),
    tenantId: z.string().nullable(),
  })
  .openapi('PublicAgent');

const InvokeEnvelope = z
  .object({
    success: z.boolean(),
    request_id: z.string(),
    upstream_status: z.number().int().optional().openapi({ description: "The upstream's status when it was not 2xx" }),
    data: z.unknown().openapi({ description: "The upstream's answer: parsed JSON, text, or null when empty" }),
  })
  .openapi('InvokeResult');

/** Public agent info: nothing about the upstream, its secret or the runtime token. */
function publicAgent(agent: AgentRecord) {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    isActive: agent.isActive,
    requireConfirmation: agent.requireConfirmation,
    requiredCredentials: agent.requiredCredentials,
    tenantId: agent.tenantId,
  };
}

const getAgentRoute = createRoute({
  method: 'get',
  path: '/{agentId}',
  tags: ['Invoke'],
  summary: 'Public info of an agent the caller may invoke',
  security: flexibleSecurity,
  request: { params: AgentIdParams },
  responses: { 200: jsonResponse(z.object({ agent: PublicAgent }), 'The agent'), ...errorResponses(401, 403, 404) },
});

const credentialsCheckRoute = createRoute({
  method: 'get',
  path: '/{agentId}/credentials-check',
  tags: ['Invoke'],
  summary:
    'Whether the caller has every credential the agent requires (401 CREDENTIALS_REQUIRED lists what is missing and where to connect it)',
  security: flexibleSecurity,
  request: { params: AgentIdParams },
  responses: {
    200: jsonResponse(z.object({ ok: z.literal(true) }), 'Every required credential is there'),
    ...errorResponses(401, 403, 404, 502, 503),
  },
});

const invokeRoute = createRoute({
  method: 'post',
  path: '/{agentId}/invoke',
  tags: ['Invoke'],
  summary: "Invoke the agent's runtime as the calling user (identity, session token and credentials injected)",
  description:
    'A JSON object with a `message` string; every field is forwarded as sent. An event-stream answer passes through unchanged; anything else is wrapped. Every answer carries `X-Gateway-Request-ID`.',
  security: flexibleSecurity,
  request: { params: AgentIdParams, body: documentedJsonBody(invokeBody) },
  responses: {
    200: {
      description: 'The upstream answered 2xx (wrapped), or its event stream',
      content: { 'application/json': { schema: InvokeEnvelope }, 'text/event-stream': { schema: z.string() } },
    },
    ...errorResponses(400, 401, 403, 404, 413, 429, 502, 503, 504),
  },
});

/**
 * `/api/v1/agents/*` of invoke-proxy: invoke an agent as a user, pre-check credentials, public
 * agent info. The invoke body has its own limit (`maxRequestBytes`), in place of the host's default.
 */
export function agentInvokeRoutes(deps: InvokeDeps, options: { maxRequestBytes: number }): OpenAPIHono {
  const { agents } = deps;
  const app = openApiApp();
  // Every invoke answer carries its request id, refusals included, so any call can be traced.
  app.use('/:agentId/invoke', (c, next) => {
    answerHeader(c, 'X-Gateway-Request-ID', c.get('requestId'));
    return next();
  });
  app.use('/:agentId/invoke', bodyLimit(options.maxRequestBytes));
  // Session tokens are refused (the default): an upstream holding one must not invoke agents as its user.
  app.use('*', flexibleAuth(deps.auth));

  app.openapi(getAgentRoute, async (c) => {
    const agent = await agents.getFor(c.var.principal, c.req.valid('param').agentId);
    return c.json({ agent: publicAgent(agent) }, 200);
  });

  app.openapi(credentialsCheckRoute, async (c) => {
    const principal = c.get('principal');
    const agent = await agents.getFor(principal, c.req.valid('param').agentId);
    await resolveRequiredCredentials(deps.credentials, agent, actingUser(principal));
    return c.json({ ok: true as const }, 200);
  });

  // The body is checked after the agent (an unknown agent is a 404 whatever the body), then forwarded byte for byte.
  app.openapi(invokeRoute, async (c) => {
    const requestId = c.get('requestId');
    const principal = c.get('principal');
    const agent = await agents.getFor(principal, c.req.valid('param').agentId);
    // Counted against the agent and the caller's tenant (an admin acting globally: the agent's).
    await deps.quota.take({ agentId: agent.id, tenant: tenantScope(principal) ?? agent.tenantId });
    await parseJson(c, invokeBody);
    // Aborts the upstream exchange if the caller goes away before its answer has begun; a relayed
    // stream is cancelled by the server adapter itself once its client is gone.
    const connection = clientGoneSignal(c);
    try {
      const answer = await invokeAgent(deps, {
        principal,
        agent,
        requestId,
        headers: requestHeaders(c),
        body: await c.req.text(),
        signal: connection.abortEvents,
      });
      return invokeResponse(answer, requestId);
    } finally {
      connection.dispose();
    }
  });

  return app;
}
