import { jwtAuth, requirePermission, type AuthService } from '@agentgw/auth';
import type { Catalog } from '@agentgw/catalog';
import { errorResponses, jsonResponse, jwtSecurity, openApiApp } from '@agentgw/service-kit';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ProviderLists } from './provider-lists.js';
import { findShadowedTools } from './shadowed-tools.js';
import { upstreamTarget } from './upstream-targets.js';

const ShadowedTool = z
  .object({
    toolName: z.string(),
    providerId: z.string(),
    providerName: z.string(),
    routedTo: z.object({ id: z.string(), name: z.string() }).nullable().openapi({ description: "Where tools/call for this name goes; null when no provider's pattern matches it" }),
  })
  .openapi('ShadowedTool');

const route = createRoute({
  tags: ['MCP'],
  security: jwtSecurity,
  method: 'get',
  path: '/',
  summary: 'Tools the unified MCP endpoint hides because their name routes to another provider',
  description:
    "Each upstream tool whose name a higher-priority (or more specific) provider pattern claims, or that no provider pattern matches, among the providers the caller's calls route over (global and its tenant's). Fix with provider patterns or priorities. Needs provider:read.",
  responses: { 200: jsonResponse(z.object({ data: z.array(ShadowedTool) }), 'Shadowed tools'), ...errorResponses(401, 403) },
});

/** `GET /api/v1/mcp/shadowed-tools`: name collisions between providers, for operators. */
export function shadowedToolsRoutes(deps: { auth: AuthService; catalog: Catalog; lists: ProviderLists }): OpenAPIHono {
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth), requirePermission('provider:read'));
  app.openapi(route, async (c) => {
    // The caller's own routing set: the collisions its merged list (tools/call) actually has.
    const providers = await deps.catalog.providers.routableFor(c.var.principal);
    const data = await findShadowedTools(
      providers,
      (p) => deps.lists.get(p, upstreamTarget(p, deps.catalog.providers.authSecret(p), null), 'tools'),
      (name, set) => deps.catalog.providers.route(name, set),
    );
    return c.json({ data }, 200);
  });
  return app;
}
