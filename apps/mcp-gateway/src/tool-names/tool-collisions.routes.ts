import { jwtAuth, requirePermission, type AuthService, type Principal } from '@agentgw/auth';
import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import { errorResponses, jsonResponse, jwtSecurity, openApiApp } from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ProviderLists } from '../provider-view/provider-lists.js';
import { sharedToolList } from '../provider-view/shared-view.js';
import { offeredTools } from './offered-tools.js';
import { collisionsOf } from './tool-collisions.js';
import { nameScope, type ToolNaming } from './tool-naming.js';

const ToolCollision = z
  .object({
    toolName: z.string().openapi({ description: 'The upstream tool name several providers offer' }),
    exposedName: z
      .string()
      .openapi({ description: 'The name clients list and call; it reaches `toolName` on this provider' }),
    providerId: z.string(),
    providerName: z.string(),
  })
  .openapi('ToolCollision');

const PerUserProvider = z.object({ providerId: z.string(), providerName: z.string() }).openapi('PerUserProvider', {
  description: 'A provider that lists its tools to each user with their own credential: not asked for this report',
});

const route = createRoute({
  tags: ['MCP'],
  security: jwtSecurity,
  method: 'get',
  path: '/',
  summary: 'Tool names several providers offer, and the name each is exposed under on the unified MCP endpoint',
  description:
    "Over the providers the caller's calls route over (global and its tenant's): every upstream tool name offered by more than one provider, one entry per provider with the exposed name that reaches it (chosen once and kept: the first keeps the bare name, later ones get `<provider>__<name>`; a provider's `namePrefix` gives `<prefix>__<name>`). Unreachable upstreams are left out. Providers that list their tools per user (`user_oauth`, `user_key`, `mcp_oauth`, `token_exchange`) are never asked without a user's own credential, so they are not in `data` but named in `listedPerUser`. Needs provider:read.",
  responses: {
    200: jsonResponse(
      z.object({ data: z.array(ToolCollision), listedPerUser: z.array(PerUserProvider) }),
      'Colliding tool names',
    ),
    ...errorResponses(401, 403),
  },
});

const ExposedToolName = z
  .object({
    toolName: z.string().openapi({ description: 'The name the upstream lists' }),
    exposedName: z.string().openapi({ description: 'The name clients list and call on the unified endpoint' }),
    providerId: z.string(),
    providerName: z.string(),
  })
  .openapi('ExposedToolName');

const exposedRoute = createRoute({
  tags: ['MCP'],
  security: jwtSecurity,
  method: 'get',
  path: '/',
  summary: 'The name each provider tool is exposed under on the unified MCP endpoint',
  description:
    "Over the providers the caller's calls route over (global and its tenant's): every tool each upstream lists, with the exposed name that reaches it (the names tools/list shows; new tools are named here as a list would name them). Sorted by provider name, then exposed name. Unreachable upstreams are left out; providers that list their tools per user are not asked, only named in `listedPerUser`. Needs provider:read.",
  responses: {
    200: jsonResponse(
      z.object({ data: z.array(ExposedToolName), listedPerUser: z.array(PerUserProvider) }),
      'Exposed tool names',
    ),
    ...errorResponses(401, 403),
  },
});

type ReportDeps = { auth: AuthService; catalog: Catalog; lists: ProviderLists; names: ToolNaming };

/** The tools the caller's routable providers offer, under their exposed names, and the per-user providers not asked. */
async function exposedFor(deps: ReportDeps, principal: Principal) {
  const routable = await deps.catalog.providers.routableFor(principal);
  const listDeps = { lists: deps.lists, authSecret: (p: ProviderRecord) => deps.catalog.providers.authSecret(p) };
  // A per-user provider has no shared list (it answers each user alone): not asked, named apart.
  const asked = routable.map((provider) => ({ provider, list: sharedToolList(listDeps, provider) }));
  const listedPerUser = asked
    .filter(({ list }) => list === null)
    .map(({ provider }) => ({ providerId: provider.id, providerName: provider.name }));
  const lists = await Promise.all(
    asked.flatMap(({ provider, list }) =>
      list === null ? [] : [list.then((l) => ({ provider, tools: offeredTools(provider, l.items ?? []) }))],
    ),
  );
  return { exposed: await deps.names.expose(nameScope(principal), lists), listedPerUser };
}

/** `GET /api/v1/mcp/tool-collisions`: which exposed name reaches which provider's tool, where names collide. */
export function toolCollisionsRoutes(deps: ReportDeps): OpenAPIHono {
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth), requirePermission('provider:read'));
  app.openapi(route, async (c) => {
    const { exposed, listedPerUser } = await exposedFor(deps, c.var.principal);
    return c.json({ data: collisionsOf(exposed), listedPerUser }, 200);
  });
  return app;
}

/** `GET /api/v1/mcp/exposed-tools`: every routable provider's tools under the names clients see (the console's provider cards). */
export function exposedToolsRoutes(deps: ReportDeps): OpenAPIHono {
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth), requirePermission('provider:read'));
  app.openapi(exposedRoute, async (c) => {
    const { exposed, listedPerUser } = await exposedFor(deps, c.var.principal);
    const data = exposed
      .map((t) => ({
        toolName: t.upstreamName,
        exposedName: t.exposedName,
        providerId: t.provider.id,
        providerName: t.provider.name,
      }))
      .sort((a, b) => a.providerName.localeCompare(b.providerName) || (a.exposedName < b.exposedName ? -1 : 1));
    return c.json({ data, listedPerUser }, 200);
  });
  return app;
}
