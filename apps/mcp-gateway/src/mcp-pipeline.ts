import type { AuditTrail } from '@agentgw/audit';
import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import {
  matchGlob,
  toolNameProblem,
  type Clock,
  type ConfirmationGate,
  type EventBus,
  type Logger,
} from '@agentgw/core';
import {
  isModernVersion,
  JSON_RPC,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JsonRpcRequest,
  type McpUpstreamClient,
} from '@agentgw/mcp-client';
import { OwnedMethods, OWNED_METHODS } from './methods/owned-methods.js';
import { EXTENSION_METHODS, ExtensionMethods } from './extensions/extension-methods.js';
import type { TaskIdCodec } from './extensions/task-ids.js';
import { isSkillResourceRequest } from './extensions/skill-files.js';
import { leftOutOf, LeftOutProviders, type LeftOut } from './methods/left-out.js';
import type { TokenExchange } from '@agentgw/credentials';
import type { UserCredentials } from './upstream-auth/user-credentials.js';
import { RequestTargets } from './upstream-auth/request-targets.js';
import { SubscriptionsListen } from './methods/subscriptions-listen.js';
import type { McpAnswer, McpRequestContext, McpResult } from './mcp-context.js';
import { followListChanges } from './gateway-list-changes.js';
import type { ListItem, ListKind, ProviderList } from './provider-view/list-items.js';
import type { ProviderLists } from './provider-view/provider-lists.js';
import { CallerProviders } from './provider-view/caller-providers.js';
import { SERVER_CAPABILITIES } from './revision-shapes.js';
import { ClientGone, egressRefused, GATEWAY_RPC, invalidParams, RpcError, toRpcError } from './rpc-errors.js';
import { targetRequestOf, UpstreamAnswer, UpstreamForwarding } from './upstream-forwarding.js';
import type { SessionStore } from './session-store.js';
import type { ToolPins } from './tool-pins/tool-pins.js';
import { agentStanding, mayReach, NO_PROVIDER_ACCESS, toolPolicy } from './tool-call/tool-access.js';
import { ToolCallUseCase } from './tool-call/tool-call.usecase.js';
import { denied, McpToolCall } from './tool-call/mcp-tool-call.usecase.js';
import { ToolSearch, type SearchSurfaceHooks } from './tool-search/tool-search.js';
import { exposedTool } from './tool-search/visible-set-key.js';
import { offeredTools } from './tool-names/offered-tools.js';
import { nameScope, type ToolNaming } from './tool-names/tool-naming.js';
import type { ServerRequestRelay } from './relay/server-request-relay.js';

/** What the pipeline works with: the catalog's cached reads, the upstream client and the side effects (audit, hold, sessions). */
export interface McpPipelineDeps {
  catalog: Catalog;
  client: McpUpstreamClient;
  lists: ProviderLists;
  sessions: SessionStore;
  audit: AuditTrail;
  gate: ConfirmationGate;
  clock: Clock;
  logger: Logger;
  upstreamTimeoutMs: number;
  /** Passes upstream server requests to the client and its answers back (`relay/`). */
  relay: ServerRequestRelay;
  /** Exposed tool names on the unified endpoint (tool-names/). */
  names: ToolNaming;
  /** Pinned definitions: a quarantined tool is neither listed nor called. */
  pins: ToolPins;
  /** Seals the tasks extension's task ids to their provider and principal (extensions/task-ids.ts). */
  taskIds: TaskIdCodec;
  /** The calling user's own credential for providers with `user_oauth` / `user_key` (upstream-auth/). */
  userCredentials: UserCredentials;
  /** RFC 8693 exchange of the caller's sign-in token for providers with `token_exchange` (upstream-auth/exchanged-tokens.ts). */
  tokenExchange: () => TokenExchange;
  /** Where provider, rule and pin changes arrive: a `subscriptions/listen` tells its client of them. */
  bus: EventBus;
}

type Result = McpResult;

/**
 * The MCP method layer shared by the unified endpoint and the per-provider proxy: tools/list
 * merging, tools/call (decided by the tool-call use case, then forwarded and its outcome
 * recorded here), resources and prompts, and forwarding. Transport concerns (HTTP, SSE,
 * sessions ids, versions) stay in the routes.
 */
export class McpPipeline {
  /** The whole tools/call (tool-call/mcp-tool-call.usecase.ts). */
  private readonly toolCalls: McpToolCall;
  private readonly search: ToolSearch;
  private readonly owned: OwnedMethods;
  private readonly extensions: ExtensionMethods;
  private readonly listens: SubscriptionsListen;
  private readonly leftOut: LeftOutProviders;
  private readonly targets: RequestTargets;
  /** Each provider as the request's caller sees it (provider-view/). */
  private readonly view: CallerProviders;
  /** Sends requests upstream as the caller (upstream-forwarding.ts). */
  private readonly forwarding: UpstreamForwarding;

  constructor(private readonly deps: McpPipelineDeps) {
    this.targets = new RequestTargets({
      catalog: deps.catalog,
      userCredentials: deps.userCredentials,
      exchange: deps.tokenExchange,
    });
    this.view = new CallerProviders(deps);
    this.forwarding = new UpstreamForwarding({
      client: deps.client,
      upstreamTimeoutMs: deps.upstreamTimeoutMs,
      targets: this.targets,
      noticed: (providerId, method) => deps.lists.noticed(providerId, method),
      relay: deps.relay,
      sessions: deps.sessions,
      sealTask: (provider, result, principal) => this.extensions.sealTask(provider, result, principal),
    });
    this.toolCalls = new McpToolCall({
      calls: new ToolCallUseCase(deps),
      view: this.view,
      names: deps.names,
      pins: deps.pins,
      clock: deps.clock,
      forward: (provider, params, ctx, call) => this.forwarding.forward(provider, 'tools/call', params, ctx, call),
    });
    this.search = new ToolSearch(deps.catalog);
    this.owned = new OwnedMethods({
      reachable: (ctx) => this.reachableFor(ctx),
      list: async (provider, kind, ctx) => (await this.view.list(provider, ctx, kind)).items ?? [],
      forward: (provider, method, params, ctx) => this.forwarding.forward(provider, method, params, ctx),
      connectFirst: (ctx) => this.connectFirst(ctx),
    });
    this.extensions = new ExtensionMethods(
      {
        forward: (provider, method, params, ctx) => this.forwarding.forward(provider, method, params, ctx),
        // A skill is decided by the access rules as the tool name `skill:<name>` (README: "Skills").
        skillAllowed: async (ctx, provider, name) =>
          (await toolPolicy(this.deps.catalog, ctx.principal, provider.id, `skill:${name}`)).action !== 'deny',
      },
      deps.taskIds,
    );
    this.leftOut = new LeftOutProviders(deps.logger);
    this.listens = new SubscriptionsListen({
      client: deps.client,
      // A caller refused for a per-user provider (not connected) is not listened for there.
      targetOf: (provider, ctx) =>
        this.targets
          .forRequest(provider, targetRequestOf(ctx))
          .catch((err: unknown) => (err instanceof RpcError ? null : Promise.reject(err))),
      openTask: (taskId, principal) => deps.taskIds.open(taskId, principal),
      noticed: (providerId, method) => deps.lists.noticed(providerId, method),
      listChanges: (announce) => followListChanges(deps.bus, announce),
    });
  }

  /** Answers one request; null when the client went away and there is nobody to answer. */
  async handle(request: JsonRpcRequest, ctx: McpRequestContext): Promise<McpAnswer | null> {
    try {
      const result = await this.dispatch(request, ctx);
      return { response: { jsonrpc: '2.0', id: request.id, result }, status: 200 };
    } catch (err) {
      if (err instanceof ClientGone || ctx.signal.aborted) return null;
      if (err instanceof UpstreamAnswer) return { response: { ...err.response, id: request.id }, status: err.status };
      const rpc = toRpcError(err, this.deps.logger);
      return {
        response: { jsonrpc: '2.0', id: request.id, error: rpc.toObject() },
        status: errorStatus(rpc, ctx.protocolVersion),
      };
    }
  }

  private async dispatch(request: JsonRpcRequest, ctx: McpRequestContext): Promise<Result> {
    const params = request.params ?? {};
    switch (request.method) {
      case 'ping':
        return {};
      case 'server/discover':
        return { supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS], capabilities: SERVER_CAPABILITIES };
    }
    // The kill switch answers 403 at once on every replica, whatever the method.
    const agent = await agentStanding(this.deps.catalog, ctx.principal);
    if (ctx.endpoint.kind === 'proxy') {
      const provider = await this.deps.catalog.providers.getFor(ctx.principal, ctx.endpoint.providerId);
      // The proxy checks provider-level access before anything reaches the provider.
      if (!(await mayReach(this.deps.catalog, ctx.principal, provider.id))) throw denied(NO_PROVIDER_ACCESS, 'high');
      if (request.method === 'subscriptions/listen' && isModernVersion(ctx.protocolVersion))
        return this.listens.handle(request.id, params, ctx, [provider]);
      return this.dispatchProxy(request.method, params, ctx, provider, agent);
    }
    // The search surface (tool-search/): the meta-tools instead of the list, when the URL or the agent asks for it.
    const searched = await this.search.handle(request.method, params, ctx, () => this.searchHooks(ctx, agent));
    if (searched !== null) return searched;
    switch (request.method) {
      case 'tools/list':
        return this.leftOut.named({ tools: await this.mergedTools(ctx) }, await this.unlistedProviders(ctx));
      case 'tools/call':
        return this.toolCalls.callExposed(params, ctx, agent.alwaysConfirm, ctx.endpoint.providerFilter);
      case 'resources/list':
        return { resources: await this.mergedList(ctx, 'resources', (item) => stringOf(item.uri)) };
      case 'resources/templates/list':
        return {
          resourceTemplates: await this.mergedList(ctx, 'resourceTemplates', (item) => stringOf(item.uriTemplate)),
        };
      case 'prompts/list':
        return { prompts: await this.mergedList(ctx, 'prompts', (item) => stringOf(item.name)) };
      case 'prompts/get':
        return this.forwardPrompt(ctx, params);
      default:
        if (isSkillResourceRequest(request.method, params))
          return this.extensions.skillResource(request.method, params, ctx, await this.reachableFor(ctx));
        if (OWNED_METHODS.has(request.method)) return this.owned.handle(request.method, params, ctx);
        if (EXTENSION_METHODS.has(request.method))
          return this.extensions.handle(request.method, params, ctx, await this.reachableFor(ctx));
        if (request.method === 'subscriptions/listen' && isModernVersion(ctx.protocolVersion))
          return this.listens.handle(request.id, params, ctx, await this.reachableFor(ctx));
        throw new RpcError(JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${request.method}`);
    }
  }

  private async dispatchProxy(
    method: string,
    params: Result,
    ctx: McpRequestContext,
    provider: ProviderRecord,
    agent: AgentStanding,
  ): Promise<Result> {
    if (method === 'tools/list') return this.providerTools(ctx, provider);
    if (method === 'tools/call')
      return this.toolCalls.call(params, ctx, agent.alwaysConfirm, { kind: 'proxied', provider });
    // Only the two tool methods above go through the policy, so no spelling of one is forwarded.
    if (method.trim().toLowerCase().startsWith('tools/'))
      throw new RpcError(JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${method}`);
    if (EXTENSION_METHODS.has(method)) return this.extensions.handle(method, params, ctx, [provider]);
    if (isSkillResourceRequest(method, params)) return this.extensions.skillResource(method, params, ctx, [provider]);
    return this.forwarding.forward(provider, method, params, ctx);
  }

  /** What the search surface re-enters: the merged list, the exposed-name resolution and the unified tools/call path. */
  private searchHooks(ctx: McpRequestContext, agent: AgentStanding): SearchSurfaceHooks {
    const providerFilter = ctx.endpoint.kind === 'unified' ? ctx.endpoint.providerFilter : null;
    return {
      visible: () => this.mergedTools(ctx),
      resolve: async (name) => {
        const offeredOf = async (provider: ProviderRecord) =>
          offeredTools(provider, await this.view.toolItems(provider, ctx));
        const resolved = await this.deps.names.resolveExposedName(
          nameScope(ctx.principal),
          await this.routingSet(ctx),
          name,
          offeredOf,
        );
        return resolved && { providerId: resolved.provider.id, upstreamName: resolved.upstreamName };
      },
      call: (params) => this.toolCalls.callExposed(params, ctx, agent.alwaysConfirm, providerFilter),
      alwaysConfirm: agent.alwaysConfirm,
    };
  }

  /**
   * The merged tools/list: every reachable provider's tools (lists fetched in parallel, each with
   * its own deadline; a failed one is left out) under their exposed names (tool-names/: chosen
   * once, never changed), sorted by exposed name; denied tools removed, the policy deciding on
   * the provider and the upstream name.
   */
  private async mergedTools(ctx: McpRequestContext): Promise<ListItem[]> {
    const reachable = await this.reachableFor(ctx);
    const lists = await Promise.all(
      reachable.map(async (provider) => ({
        provider,
        tools: offeredTools(
          provider,
          (await this.deps.pins.apply(provider, await this.view.toolItems(provider, ctx))).visible,
        ),
      })),
    );
    const tools: ListItem[] = [];
    for (const { exposedName, provider, upstreamName, tool } of await this.deps.names.expose(
      nameScope(ctx.principal),
      lists,
    )) {
      if ((await toolPolicy(this.deps.catalog, ctx.principal, provider.id, upstreamName)).action !== 'deny')
        tools.push(exposedTool(tool, exposedName));
    }
    return tools;
  }

  /**
   * The reachable providers whose tool list could not be had, from the lists just used (no upstream
   * call): named in the answer, never dropped silently; one the caller must connect first with its connect URL.
   */
  private async unlistedProviders(ctx: McpRequestContext): Promise<LeftOut[]> {
    const reachable = await this.reachableFor(ctx);
    const lists = await Promise.all(reachable.map((p) => this.view.list(p, ctx, 'tools', ctx.clientCapabilities)));
    return reachable.flatMap((p, i) => (lists[i]!.items === null ? [leftOutOfList(p, lists[i]!)] : []));
  }

  /**
   * One provider's tools/list for the proxy: those its pattern claims (as on the unified endpoint),
   * denied tools removed. A caller who must connect first gets none, the provider named as left
   * out with its connect URL (as on the unified endpoint).
   */
  private async providerTools(ctx: McpRequestContext, provider: ProviderRecord): Promise<Result> {
    const list = await this.view.list(provider, ctx, 'tools', ctx.clientCapabilities);
    if (list.needsAuth) return this.leftOut.named({ tools: [] }, [leftOutOfList(provider, list)]);
    if (list.refusal) throw egressRefused(list.refusal, provider.id);
    if (list.items === null)
      throw new RpcError(GATEWAY_RPC.UPSTREAM_FAILED, 'The provider did not list its tools', 502, {
        reason: list.failure,
      });
    const tools: ListItem[] = [];
    for (const tool of (await this.deps.pins.apply(provider, list.items)).visible) {
      const name = toolNameOf(tool);
      if (name === null || !matchGlob(provider.pattern, name)) continue;
      if ((await toolPolicy(this.deps.catalog, ctx.principal, provider.id, name)).action !== 'deny') tools.push(tool);
    }
    return { tools };
  }

  /** The providers of the caller's routing set on this endpoint that they may reach. */
  private async reachableFor(ctx: McpRequestContext): Promise<ProviderRecord[]> {
    return this.view.reachable(ctx.principal, await this.routingSet(ctx));
  }

  /** Resources, templates or prompts of every reachable provider, first in routing order winning a key. */
  private async mergedList(
    ctx: McpRequestContext,
    kind: ListKind,
    keyOf: (item: ListItem) => string | null,
  ): Promise<ListItem[]> {
    const reachable = await this.reachableFor(ctx);
    const lists = await Promise.all(reachable.map((p) => this.view.list(p, ctx, kind)));
    const merged: ListItem[] = [];
    const seen = new Set<string>();
    for (const list of lists) {
      for (const item of list.items ?? []) {
        const key = keyOf(item);
        if (key === null || seen.has(key)) continue;
        seen.add(key);
        merged.push(item);
      }
    }
    return merged;
  }

  /** prompts/get on the unified endpoint: to the first reachable provider listing that name. */
  private async forwardPrompt(ctx: McpRequestContext, params: Result): Promise<Result> {
    const name = params.name;
    if (typeof name !== 'string') throw invalidParams('params.name must be a string');
    for (const provider of await this.reachableFor(ctx)) {
      const list = await this.view.list(provider, ctx, 'prompts');
      if ((list.items ?? []).some((item) => item.name === name))
        return this.forwarding.forward(provider, 'prompts/get', params, ctx);
    }
    await this.connectFirst(ctx);
    throw invalidParams(`Unknown prompt: ${name}`);
  }

  /**
   * A prompt, resource or completion no provider lists for the caller may be one a per-user
   * provider they have not connected would list: refused with its connect URL, as a call of a name
   * it claims is (`unconnectedClaimant`). Returns when there is none (the name is unknown).
   */
  private async connectFirst(ctx: McpRequestContext): Promise<void> {
    for (const provider of await this.reachableFor(ctx)) {
      if (!(await this.view.mustConnect(provider, ctx))) continue;
      // Throws the caller's refusal; returns only when they connected since their list was cached.
      await this.targets.forRequest(provider, targetRequestOf(ctx));
    }
  }

  /** The caller's routing set on this endpoint (a `providers=` filter narrows the unified one). */
  private routingSet(ctx: McpRequestContext): Promise<ProviderRecord[]> {
    return this.view.routingSet(ctx.principal, ctx.endpoint.kind === 'unified' ? ctx.endpoint.providerFilter : null);
  }
}

type AgentStanding = Awaited<ReturnType<typeof agentStanding>>;

/** A gateway error's HTTP status; on the 2026-07-28 wire an unknown method is 404 (its transport says so). */
const errorStatus = (rpc: RpcError, protocolVersion: string): number =>
  rpc.code === JSON_RPC.METHOD_NOT_FOUND && isModernVersion(protocolVersion) ? 404 : rpc.status;

const stringOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A listed tool's name, or null for one tools/call refuses (over the glob cap, which would fail the whole list; hidden characters; surrounding spaces). */
const toolNameOf = (tool: ListItem): string | null => {
  const name = stringOf(tool.name);
  return name !== null && toolNameProblem(name) === null ? name : null;
};

/** A provider left out of a tools/list, with the connect URL when the caller must connect first. */
const leftOutOfList = (provider: ProviderRecord, list: ProviderList): LeftOut => {
  const leftOut = leftOutOf(provider, list.failure ?? 'no tool list');
  return list.needsAuth?.authUrl ? { ...leftOut, authUrl: list.needsAuth.authUrl } : leftOut;
};
