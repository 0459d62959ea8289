import { jwtAuth, requirePermission } from '@agentgw/auth';
import { createCatalogAdmin, NAME_PREFIX_RULE } from '@agentgw/catalog';
import { assertStoredUrlAllowed, egressPolicyFromConfig } from '@agentgw/core';
import {
  HttpUrl,
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
import { createMcpUpstreamAuth } from './mcp-upstream-auth.js';
import { adminActionLog, changedFields } from './admin-action-log.js';
import { TokenExchangeInputSchema, TokenExchangeSchema, tokenExchangeWrite } from './token-exchange-settings.js';
import { fetchProviderTools, providerView } from './tool-providers.js';
import { createUpstreamToolLister } from './upstream-tools.js';
import { TenantIdSchema } from './users.routes.js';

const AuthTypeSchema = z
  .enum(['bearer', 'api_key', 'none', 'user_oauth', 'user_key', 'mcp_oauth', 'token_exchange'])
  .openapi('ToolProviderAuthType', {
    description:
      "`bearer` sends `Authorization: Bearer <authSecret>`, `api_key` sends `X-Api-Key: <authSecret>`; `user_oauth` sends the calling user's own OAuth access token of `credentialServiceType` (from the vault) as `Authorization: Bearer`, `user_key` that user's stored key of it as `X-Api-Key` (a user who has none gets the connect URL); `mcp_oauth`: the endpoint is an MCP server protected by the MCP authorization spec — on create (or `POST /{id}/discover-auth`) the gateway discovers its authorization server, registers itself there (RFC 7591; else `upstreamClient` must be entered) and saves an oauth2 credential provider under `credentialServiceType` (derived when absent), then calls behave as `user_oauth`; `token_exchange` (RFC 8693): each call exchanges the caller's own sign-in token (a user JWT or a gateway OAuth access token) at `tokenExchange`'s authorization server for an upstream token sent as `Authorization: Bearer` (the caller's token never goes upstream; callers without a sign-in token are refused)",
  });
const UpstreamClientSchema = z
  .object({
    clientId: z.string().min(1).max(500),
    clientSecret: z.string().min(1).max(8192).openapi({ description: 'Write-only; sealed in the credential provider' }),
  })
  .openapi('McpUpstreamClient', {
    description:
      "With mcp_oauth: the gateway's client registered by hand at the upstream's authorization server (needed when it offers no registration: 400 CLIENT_ID_REQUIRED)",
  });
const CredentialServiceTypeSchema = z
  .string()
  .max(64)
  .regex(/^[a-z][a-z0-9_]*$/, 'must match ^[a-z][a-z0-9_]*$')
  .nullable()
  .openapi({
    description: 'With user_oauth / user_key: the service type of the user credential each call carries',
    example: 'github',
  });

const ToolProviderSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    pattern: z.string(),
    endpoint: z.string().nullable().openapi({
      description:
        'The upstream MCP URL; null for callers who may not update the provider (such URLs often embed a key)',
    }),
    authType: AuthTypeSchema,
    hasAuthSecret: z.boolean(),
    credentialServiceType: z.string().nullable(),
    tokenExchange: TokenExchangeSchema,
    priority: z.number().int(),
    description: z.string().nullable(),
    namePrefix: z.string().nullable(),
    tenantId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('ToolProvider');

const fields = {
  name: z.string().trim().min(1).max(200),
  pattern: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .openapi({ description: 'Tool-name glob: `*` any run, `?` one character', example: 'github_*' }),
  endpoint: HttpUrl.openapi({ description: 'Upstream MCP server (Streamable HTTP)' }),
  authSecret: z.string().min(1).max(8192).openapi({ description: 'Write-only; responses carry `hasAuthSecret`' }),
  priority: z.number().int().min(-1_000_000).max(1_000_000).openapi({
    description:
      'When providers first offer the same tool name together, the higher keeps the bare name on the unified endpoint (a name, once chosen, is kept)',
  }),
  description: z.string().max(2000).nullable(),
  namePrefix: z
    .string()
    .max(NAME_PREFIX_RULE.maxLength)
    .regex(NAME_PREFIX_RULE.pattern, 'lowercase letters, digits, `_` and `-`, starting with a letter or digit')
    .nullable()
    .openapi({
      description: `Exposes its tools on the unified endpoint as \`<namePrefix>__<tool>\` (at most ${NAME_PREFIX_RULE.maxLength} characters: a-z, 0-9, _ and -); null keeps the upstream names (a collision is disambiguated). Changing it renames the provider's exposed tools`,
      example: 'github',
    }),
};

const CreateToolProviderBody = z
  .object({
    name: fields.name,
    pattern: fields.pattern,
    endpoint: fields.endpoint,
    authType: AuthTypeSchema.default('none'),
    authSecret: fields.authSecret.optional(),
    credentialServiceType: CredentialServiceTypeSchema.optional(),
    upstreamClient: UpstreamClientSchema.optional(),
    tokenExchange: TokenExchangeInputSchema.optional().openapi({ description: 'Required with token_exchange' }),
    priority: fields.priority.default(0),
    description: fields.description.optional(),
    namePrefix: fields.namePrefix.optional(),
    tenantId: TenantIdSchema.nullable()
      .optional()
      .openapi({ description: 'Admin only; others are pinned to their own tenant' }),
  })
  .openapi('CreateToolProviderRequest');

const UpdateToolProviderBody = z
  .object({
    name: fields.name.optional(),
    pattern: fields.pattern.optional(),
    endpoint: fields.endpoint.optional(),
    authType: AuthTypeSchema.optional(),
    credentialServiceType: CredentialServiceTypeSchema.optional(),
    tokenExchange: TokenExchangeInputSchema.nullable().optional().openapi({
      description: 'Replaces the exchange settings (a `clientSecret` replaces the sealed secret); null removes them',
    }),
    authSecret: fields.authSecret
      .nullable()
      .optional()
      .openapi({ description: 'A string replaces the secret, null removes it, absent keeps it' }),
    priority: fields.priority.optional(),
    description: fields.description.optional(),
    namePrefix: fields.namePrefix.optional(),
  })
  .openapi('UpdateToolProviderRequest');

const DiscoverAuthBody = z
  .object({ upstreamClient: UpstreamClientSchema.optional() })
  .openapi('DiscoverToolProviderAuthRequest');

const UpstreamToolSchema = z
  .object({ name: z.string(), description: z.string().nullable(), inputSchema: z.record(z.string(), z.unknown()) })
  .openapi('UpstreamTool');

const ProviderWritten = z.object({ success: z.literal(true), provider: ToolProviderSchema });
const common = { tags: ['Tool providers'], security: jwtSecurity };

const listRoute = createRoute({
  ...common,
  method: 'get',
  path: '/',
  summary: 'List tool providers',
  description: 'Visible providers (own tenant and global), highest priority first.',
  responses: {
    200: jsonResponse(z.object({ providers: z.array(ToolProviderSchema) }), 'Tool providers'),
    ...errorResponses(401),
  },
});
const createProviderRoute = createRoute({
  ...common,
  method: 'post',
  path: '/',
  summary: 'Create a tool provider',
  middleware: requirePermission('provider:create'),
  request: { body: jsonBody(CreateToolProviderBody) },
  responses: { 201: jsonResponse(ProviderWritten, 'Created'), ...errorResponses(400, 401, 403, 502) },
});
const getRoute = createRoute({
  ...common,
  method: 'get',
  path: '/{id}',
  summary: 'Get a tool provider',
  request: { params: IdParams },
  responses: {
    200: jsonResponse(z.object({ provider: ToolProviderSchema }), 'Tool provider'),
    ...errorResponses(401, 404),
  },
});
const updateRoute = createRoute({
  ...common,
  method: 'put',
  path: '/{id}',
  summary: 'Update a tool provider',
  description: 'Partial: absent fields keep their value. Global providers can only be changed by an admin.',
  middleware: requirePermission('provider:update'),
  request: { params: IdParams, body: jsonBody(UpdateToolProviderBody) },
  responses: { 200: jsonResponse(ProviderWritten, 'Updated'), ...errorResponses(400, 401, 403, 404) },
});
const deleteRoute = createRoute({
  ...common,
  method: 'delete',
  path: '/{id}',
  summary: 'Delete a tool provider and its access rules',
  middleware: requirePermission('provider:delete'),
  request: { params: IdParams },
  responses: { 200: jsonResponse(SuccessBody, 'Deleted'), ...errorResponses(401, 403, 404) },
});
const discoverAuthRoute = createRoute({
  ...common,
  method: 'post',
  path: '/{id}/discover-auth',
  summary: "Discover the MCP upstream's authorization and register the gateway there",
  description:
    "Switches the provider to `mcp_oauth`: discovery (the upstream's 401 / RFC 9728 metadata, then its authorization server's metadata), RFC 7591 registration or the given `upstreamClient`, saved as the oauth2 credential provider of its service type. 400 CLIENT_ID_REQUIRED when the server would not register the gateway; 502 when discovery fails.",
  middleware: requirePermission('provider:update'),
  request: { params: IdParams, body: jsonBody(DiscoverAuthBody) },
  responses: { 200: jsonResponse(ProviderWritten, 'Discovered and saved'), ...errorResponses(400, 401, 403, 404, 502) },
});
const toolsRoute = createRoute({
  ...common,
  method: 'get',
  path: '/{id}/tools',
  summary: "Fetch the upstream server's tool list",
  description: 'Live MCP initialize + tools/list against the endpoint with the provider credentials, bounded in time.',
  request: { params: IdParams },
  responses: {
    200: jsonResponse(z.object({ tools: z.array(UpstreamToolSchema) }), 'Tools reported by the upstream'),
    ...errorResponses(401, 403, 404, 502, 504),
  },
});

export interface ToolProvidersRoutesOptions {
  /** Bound for `GET /:id/tools` (connect + list); defaults to 10 s. */
  toolListTimeoutMs?: number;
}

export function toolProvidersRoutes(deps: ServiceDeps, options: ToolProvidersRoutesOptions = {}): OpenAPIHono {
  const { providers } = createCatalogAdmin(deps);
  const egress = egressPolicyFromConfig(deps.config);
  const listTools = createUpstreamToolLister(egress);
  const mcpUpstreamAuth = createMcpUpstreamAuth(deps);
  const logAction = adminActionLog(deps);
  const providerSubject = (provider: { id: string; tenantId: string | null }, details: Record<string, unknown>) => ({
    providerId: provider.id,
    tenantId: provider.tenantId,
    details,
  });
  const app = openApiApp();
  app.use('*', jwtAuth(deps.auth));
  app.openapi(listRoute, async (c) => {
    const visible = await providers.list(c.var.principal);
    return c.json({ providers: visible.map((provider) => providerView(c.var.principal, provider)) }, 200);
  });
  app.openapi(createProviderRoute, async (c) => {
    const body = c.req.valid('json');
    // Write-time egress check (metadata names, forbidden literal IPs → 400); connect time is the guarantee.
    assertStoredUrlAllowed(egress, body.endpoint, 'endpoint');
    const { upstreamClient, tokenExchange, ...rest } = body;
    const fields = tokenExchange ? { ...rest, ...tokenExchangeWrite(egress, tokenExchange) } : rest;
    const provider =
      body.authType === 'mcp_oauth'
        ? await mcpUpstreamAuth.create(c.var.principal, { ...fields, ...(upstreamClient && { upstreamClient }) })
        : await providers.create(c.var.principal, fields);
    await logAction(
      c.var.principal,
      'tool_provider_created',
      providerSubject(provider, { name: provider.name, endpoint: provider.endpoint, authType: provider.authType }),
    );
    return c.json({ success: true as const, provider: providerView(c.var.principal, provider) }, 201);
  });
  app.openapi(getRoute, async (c) => {
    const provider = await providers.show(c.var.principal, c.req.valid('param').id);
    return c.json({ provider: providerView(c.var.principal, provider) }, 200);
  });
  app.openapi(updateRoute, async (c) => {
    const { tokenExchange, ...patch } = c.req.valid('json');
    if (patch.endpoint !== undefined) assertStoredUrlAllowed(egress, patch.endpoint, 'endpoint');
    const exchange =
      tokenExchange === undefined
        ? {}
        : tokenExchange === null
          ? { tokenExchange: null }
          : tokenExchangeWrite(egress, tokenExchange);
    const provider = await providers.update(c.var.principal, c.req.valid('param').id, { ...patch, ...exchange });
    await logAction(
      c.var.principal,
      'tool_provider_updated',
      providerSubject(provider, { fields: changedFields({ ...patch, tokenExchange }) }),
    );
    return c.json({ success: true as const, provider: providerView(c.var.principal, provider) }, 200);
  });
  app.openapi(deleteRoute, async (c) => {
    const provider = await providers.show(c.var.principal, c.req.valid('param').id);
    await providers.delete(c.var.principal, provider.id);
    await logAction(c.var.principal, 'tool_provider_deleted', providerSubject(provider, { name: provider.name }));
    return c.json({ success: true as const }, 200);
  });
  app.openapi(discoverAuthRoute, async (c) => {
    const provider = await mcpUpstreamAuth.rediscover(
      c.var.principal,
      c.req.valid('param').id,
      c.req.valid('json').upstreamClient ?? null,
    );
    return c.json({ success: true as const, provider: providerView(c.var.principal, provider) }, 200);
  });
  app.openapi(toolsRoute, async (c) => {
    const tools = await fetchProviderTools(
      listTools,
      providers,
      c.var.principal,
      c.req.valid('param').id,
      options.toolListTimeoutMs,
    );
    return c.json({ tools }, 200);
  });
  return app;
}
