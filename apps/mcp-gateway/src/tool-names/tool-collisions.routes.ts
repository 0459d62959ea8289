import { jwtAuth, requirePermission, type AuthService } from '@agentgw/auth';
import type { Catalog } from '@agentgw/catalog';
import { errorResponses, jsonResponse, jwtSecurity, openApiApp } from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ProviderLists } from '../provider-lists.js';
import { upstreamTarget } from '../upstream-targets.js';
import { offeredTools } from './offered-tools.js';
import { collisionsOf } from './tool-collisions.js';
import { nameScope, type ToolNaming } from './tool-naming.js';

const ToolCollision = z
  .object({
    toolName: z.string().openapi({ description: 'The upstream tool name several providers offer' }),
    exposedName: z.string().openapi({ description: 'The name clients list and call; it reaches `toolName` on this provider' }),
    providerId: z.string(),
    providerName: z.string(),
  })
  .openapi('ToolCollision');

const route = createRoute({
  tags: ['MCP'],
  security: jwtSecurity,
  method: 'get',
  path: '/',
  summary: 'Tool names several providers offer, and the name each is exposed under on the unified MCP endpoint',
  description:
    "Over the providers the caller's calls route over (global and its tenant's): every upstream tool name offered by more than one provider, one entry per provider with the exposed name that reaches it (chosen once and kept: the first keeps the bare name, later ones get `<provider>__<name>`; a provider's `namePrefix` gives `<prefix>__<name>`). Unreachable upstreams are left out. Needs provider:read.",
  responses: { 200: jsonResponse(z.object({ data: z.array(ToolCollision) }), 'Colliding tool names'), ...errorResponses(401, 403) },
});

/** `GET /api/v1/mcp/tool-collisions`: which exposed name reaches which provider's tool, where names collide. */
export function toolCollisionsRoutes(deps: { auth: AuthService; catalog: Catalog; lists: ProviderLists; names: ToolNaming }): OpenAPIHono {
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth), requirePermission('provider:read'));
  app.openapi(route, async (c) => {
    const { principal } = c.var;
    const providers = await deps.catalog.providers.routableFor(principal);
    const lists = await Promise.all(
      providers.map(async (provider) => {
        const list = await deps.lists.get(provider, upstreamTarget(provider, deps.catalog.providers.authSecret(provider), null), 'tools');
        return { provider, tools: offeredTools(provider, list.items ?? []) };
      }),
    );
    return c.json({ data: collisionsOf(await deps.names.expose(nameScope(principal), lists)) }, 200);
  });
  return app;
}
