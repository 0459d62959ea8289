import { ALL_CLIENTS, jwtAuth, requirePermission } from '@agentgw/auth';
import {
  SuccessBody,
  errorResponses,
  jsonBody,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { bindClientAgent, listClientAgents, unbindClientAgent } from './client-agents.js';

const id = z.string().trim().min(1).max(200);
const clientId = z
  .string()
  .trim()
  .min(1)
  .max(2000)
  .openapi({
    description: `An OAuth client id (a registered id or a metadata-document URL), or \`${ALL_CLIENTS}\` for every client of the user`,
    example: ALL_CLIENTS,
  });

const BindingSchema = z
  .object({ userId: z.string(), clientId: z.string(), agentId: z.string(), createdAt: z.string() })
  .openapi('OAuthClientAgentBinding');
const BindBody = z.object({ userId: id, clientId, agentId: id }).strict().openapi('BindOAuthClientAgentRequest');
const UserQuery = z.object({ userId: id });
const UnbindQuery = z.object({ userId: id, clientId });

const common = { tags: ['OAuth clients'], security: jwtSecurity, middleware: requirePermission('user:manage') };
const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/',
  summary: "A user's MCP clients bound to agents",
  request: { query: UserQuery },
  responses: {
    200: jsonResponse(z.object({ bindings: z.array(BindingSchema) }), 'Bindings, the all-clients one first'),
    ...errorResponses(400, 401, 403, 404),
  },
});
const bindRoute = createRoute({
  ...common,
  method: 'put',
  path: '/',
  summary: "Bind a user's MCP client (or all of them) to an agent",
  description:
    "Calls made with that client's OAuth access tokens then run under the agent's access rules with the user as end user (the client's own binding wins over the user's `*` one). Replaces an earlier binding of the same user and client.",
  request: { body: jsonBody(BindBody) },
  responses: {
    200: jsonResponse(z.object({ success: z.literal(true), binding: BindingSchema }), 'Bound'),
    ...errorResponses(400, 401, 403, 404),
  },
});
const unbindRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/',
  summary: 'Remove a binding (the client goes back to the user’s own rules)',
  request: { query: UnbindQuery },
  responses: { 200: jsonResponse(SuccessBody, 'Removed'), ...errorResponses(400, 401, 403, 404) },
});

/** `/api/v1/admin/oauth-client-agents`: an admin binds users' MCP clients to agents (issue 23). */
export function clientAgentsRoutes(deps: ServiceDeps): OpenAPIHono {
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth));
  app.openapi(listRoute, async (c) =>
    c.json({ bindings: await listClientAgents(deps, c.var.principal, c.req.valid('query').userId) }, 200),
  );
  app.openapi(bindRoute, async (c) =>
    c.json({ success: true as const, binding: await bindClientAgent(deps, c.var.principal, c.req.valid('json')) }, 200),
  );
  app.openapi(unbindRoute, async (c) => {
    await unbindClientAgent(deps, c.var.principal, c.req.valid('query'));
    return c.json({ success: true as const }, 200);
  });
  return app;
}
