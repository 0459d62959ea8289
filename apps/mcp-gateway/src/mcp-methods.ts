import type { AuditTrail } from '@agentgw/audit';
import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import type { Clock, ConfirmationGate, EventBus, Logger } from '@agentgw/core';
import type { TokenExchange } from '@agentgw/credentials';
import { isModernVersion, SUPPORTED_PROTOCOL_VERSIONS, type McpUpstreamClient } from '@agentgw/mcp-client';
import { capabilitiesFor } from './advertised-capabilities.js';
import { EXTENSION_METHODS, ExtensionMethods } from './extensions/extension-methods.js';
import { isSkillResourceRequest } from './extensions/skill-files.js';
import type { TaskIdCodec } from './extensions/task-ids.js';
import { followListChanges } from './gateway-list-changes.js';
import type { McpRequestContext } from './mcp-context.js';
import {
  methodNotFound,
  type McpMethodTable,
  type MethodHandler,
  type ProxyMethodHandler,
  type RoutedRequest,
} from './mcp-method-router.js';
import { LeftOutProviders } from './methods/left-out.js';
import { ListMethods } from './methods/list-methods.js';
import { OWNED_METHODS, OwnedMethods } from './methods/owned-methods.js';
import { SubscriptionsListen } from './methods/subscriptions-listen.js';
import { CallerProviders } from './provider-view/caller-providers.js';
import type { ProviderLists } from './provider-view/provider-lists.js';
import type { LegacyRequestBridge } from './relay/legacy-request-bridge.js';
import type { ServerRequestRelay } from './relay/server-request-relay.js';
import { invalidParams, RpcError } from './rpc-errors.js';
import type { SessionStore } from './session-store.js';
import type { ClientCarrier } from './tool-call/client-carrier.js';
import type { HeldCallRounds } from './tool-call/held-call-round.js';
import type { HeldCallTasks } from './tool-call/held-call-task.js';
import type { HeldTaskNotices } from './tool-call/held-task-notices.js';
import { McpToolCall } from './tool-call/mcp-tool-call.usecase.js';
import { toolPolicy } from './tool-call/tool-access.js';
import { ToolCallUseCase } from './tool-call/tool-call.usecase.js';
import { offeredTools } from './tool-names/offered-tools.js';
import { nameScope, type ToolNaming } from './tool-names/tool-naming.js';
import type { ToolPins } from './tool-pins/tool-pins.js';
import { ToolSearch, type SearchSurfaceHooks } from './tool-search/tool-search.js';
import { RequestTargets } from './upstream-auth/request-targets.js';
import type { UserCredentials } from './upstream-auth/user-credentials.js';
import { targetRequestOf, UpstreamForwarding } from './upstream-forwarding.js';

/** What the MCP methods work with: the catalog's cached reads, the upstream client and the side effects (audit, hold, sessions). */
export interface McpMethodsDeps {
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
  /** A legacy upstream's server requests as input_required rounds for a 2026-07-28 client, and that client's retries (`relay/`). */
  bridge: LegacyRequestBridge;
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
  /** Asks a held call's person in their own MCP client when the rule lets it (tool-call/client-carrier.ts); null: the console and push only. */
  carrier: ClientCarrier | null;
  /** Asks a 2026-07-28 client's person by an input_required round instead (tool-call/held-call-round.ts); null: not in the client. */
  rounds: HeldCallRounds | null;
  /** Answers a held call of a client that declared the tasks extension with a task (tool-call/held-call-task.ts); null: no hub. */
  tasks: HeldCallTasks | null;
  /** Tells a `subscriptions/listen` of its held-call tasks' decisions (tool-call/held-task-notices.ts); null: no hub, no held tasks. */
  heldNotices: HeldTaskNotices | null;
}

/**
 * The MCP methods' handlers, composed once per process over the caller's view of providers
 * (provider-view/), the whole tools/call (tool-call/), the list methods, the owned and extension
 * methods, `subscriptions/listen` and the search surface, all forwarding through one
 * UpstreamForwarding; and the table that routes each method to its handler (mcp-method-router.ts).
 */
export function mcpMethodTable(deps: McpMethodsDeps): McpMethodTable {
  const targets = new RequestTargets({
    catalog: deps.catalog,
    userCredentials: deps.userCredentials,
    exchange: deps.tokenExchange,
  });
  const view = new CallerProviders(deps);
  const forwarding: UpstreamForwarding = new UpstreamForwarding({
    client: deps.client,
    upstreamTimeoutMs: deps.upstreamTimeoutMs,
    targets,
    noticed: (providerId, method) => deps.lists.noticed(providerId, method),
    relay: deps.relay,
    bridge: deps.bridge,
    sessions: deps.sessions,
    sealTask: (provider, result, principal) => extensions.sealTask(provider, result, principal),
  });
  const forward = forwarding.forward.bind(forwarding);
  const toolCalls = new McpToolCall({
    calls: new ToolCallUseCase(deps),
    view,
    names: deps.names,
    pins: deps.pins,
    clock: deps.clock,
    carrier: deps.carrier,
    rounds: deps.rounds,
    tasks: deps.tasks,
    forward: (provider, params, ctx, call) => forward(provider, 'tools/call', params, ctx, call),
  });
  const lists = new ListMethods({
    catalog: deps.catalog,
    view,
    names: deps.names,
    pins: deps.pins,
    leftOut: new LeftOutProviders(deps.logger),
    forward,
    refuseUnconnected: (provider, ctx) => targets.forRequest(provider, targetRequestOf(ctx)),
  });
  const owned = new OwnedMethods({
    reachable: (ctx) => lists.reachableFor(ctx),
    list: async (provider, kind, ctx) => (await view.list(provider, ctx, kind)).items ?? [],
    forward,
    connectFirst: (ctx) => lists.connectFirst(ctx),
  });
  const extensions = new ExtensionMethods(
    {
      forward,
      // A skill is decided by the access rules as the tool name `skill:<name>` (README: "Skills").
      skillAllowed: async (ctx, provider, name) =>
        (await toolPolicy(deps.catalog, ctx.principal, provider.id, `skill:${name}`)).action !== 'deny',
      heldTask: (method, taskId, ref, params, ctx, providers) => {
        if (deps.tasks === null) throw invalidParams('Unknown task');
        return deps.tasks.handle(method, taskId, ref, params, ctx, providers, toolCalls);
      },
    },
    deps.taskIds,
  );
  const listens = new SubscriptionsListen({
    client: deps.client,
    // A caller refused for a per-user provider (not connected) is not listened for there.
    targetOf: (provider, ctx) =>
      targets
        .forRequest(provider, targetRequestOf(ctx))
        .catch((err: unknown) => (err instanceof RpcError ? null : Promise.reject(err))),
    // A provider's task is listened for upstream; a held call's, on the bus its decisions come by.
    openTask: (taskId, principal) => {
      const ref = deps.taskIds.open(taskId, principal);
      return ref?.kind === 'held' && deps.heldNotices === null ? null : ref;
    },
    followHeld: async (tasks, tell) => (await deps.heldNotices?.follow(tasks, tell)) ?? { stop: () => undefined },
    noticed: (providerId, method) => deps.lists.noticed(providerId, method),
    listChanges: (announce) => followListChanges(deps.bus, announce),
  });
  const search = new ToolSearch(deps.catalog);

  /** What the search surface re-enters: the merged list, the exposed-name resolution and the unified tools/call path. */
  const searchHooks = ({ ctx, agent }: RoutedRequest): SearchSurfaceHooks => {
    const providerFilter = ctx.endpoint.kind === 'unified' ? ctx.endpoint.providerFilter : null;
    return {
      visible: () => lists.mergedTools(ctx),
      resolve: async (name) => {
        const offeredOf = async (provider: ProviderRecord) =>
          offeredTools(provider, await view.toolItems(provider, ctx));
        const routing = await view.routingSet(ctx.principal, providerFilter);
        const resolved = await deps.names.resolveExposedName(nameScope(ctx.principal), routing, name, offeredOf);
        return resolved && { providerId: resolved.provider.id, upstreamName: resolved.upstreamName };
      },
      call: (params) => toolCalls.callExposed(params, ctx, agent.alwaysConfirm, providerFilter),
      alwaysConfirm: agent.alwaysConfirm,
    };
  };

  // A skill file is a resource of the skills extension; any other resource is its provider's.
  const unifiedResource: MethodHandler = async ({ request, params, ctx }) =>
    isSkillResourceRequest(request.method, params)
      ? extensions.skillResource(request.method, params, ctx, await lists.reachableFor(ctx))
      : owned.handle(request.method, params, ctx);
  const proxyResource: ProxyMethodHandler = (routed) =>
    isSkillResourceRequest(routed.request.method, routed.params)
      ? extensions.skillResource(routed.request.method, routed.params, routed.ctx, [routed.provider])
      : proxyOther(routed);
  const proxyOther: ProxyMethodHandler = ({ request, params, ctx, provider }) =>
    forward(provider, request.method, params, ctx);
  const modern = (ctx: McpRequestContext) => isModernVersion(ctx.protocolVersion);

  const unified = new Map<string, MethodHandler>([
    ['tools/list', ({ ctx }) => lists.toolsList(ctx)],
    [
      'tools/call',
      ({ params, ctx, agent }) =>
        toolCalls.callExposed(
          params,
          ctx,
          agent.alwaysConfirm,
          ctx.endpoint.kind === 'unified' ? ctx.endpoint.providerFilter : null,
        ),
    ],
    ['resources/list', async ({ ctx }) => ({ resources: await lists.merged(ctx, 'resources') })],
    [
      'resources/templates/list',
      async ({ ctx }) => ({ resourceTemplates: await lists.merged(ctx, 'resourceTemplates') }),
    ],
    ['prompts/list', async ({ ctx }) => ({ prompts: await lists.merged(ctx, 'prompts') })],
    ['prompts/get', ({ params, ctx }) => lists.getPrompt(ctx, params)],
    ...[...OWNED_METHODS].map((method): [string, MethodHandler] => [method, unifiedResource]),
    ...[...EXTENSION_METHODS].map((method): [string, MethodHandler] => [
      method,
      async ({ params, ctx }) => extensions.handle(method, params, ctx, await lists.reachableFor(ctx)),
    ]),
    [
      'subscriptions/listen',
      async ({ request, params, ctx }) => {
        if (!modern(ctx)) throw methodNotFound(request.method);
        return listens.handle(request.id, params, ctx, await lists.reachableFor(ctx));
      },
    ],
  ]);
  const proxy = new Map<string, ProxyMethodHandler>([
    ['tools/list', ({ ctx, provider }) => lists.providerTools(ctx, provider)],
    [
      'tools/call',
      ({ params, ctx, agent, provider }) =>
        toolCalls.call(params, ctx, agent.alwaysConfirm, { kind: 'proxied', provider }),
    ],
    ...[...EXTENSION_METHODS].map((method): [string, ProxyMethodHandler] => [
      method,
      ({ params, ctx, provider }) => extensions.handle(method, params, ctx, [provider]),
    ]),
    ['logging/setLevel', ({ params, ctx, provider }) => owned.setLevelOn([provider], params, ctx)],
    ...['resources/read', 'resources/subscribe', 'resources/unsubscribe'].map(
      (method): [string, ProxyMethodHandler] => [method, proxyResource],
    ),
    [
      'subscriptions/listen',
      (routed) =>
        modern(routed.ctx)
          ? listens.handle(routed.request.id, routed.params, routed.ctx, [routed.provider])
          : proxyOther(routed),
    ],
  ]);
  return {
    open: new Map<string, (routed: Omit<RoutedRequest, 'agent'>) => Promise<Record<string, unknown>>>([
      ['ping', async () => ({})],
      [
        'server/discover',
        async ({ ctx }) => ({
          supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
          capabilities: await capabilitiesFor(
            { ...deps, targetOf: (provider) => targets.forRequest(provider, targetRequestOf(ctx)) },
            ctx.principal,
            ctx.endpoint,
          ),
        }),
      ],
    ]),
    unified,
    // The search surface (tool-search/): the meta-tools instead of the list, when the URL or the agent asks for it.
    searchSurface: (routed) =>
      search.handle(routed.request.method, routed.params, routed.ctx, () => searchHooks(routed)),
    proxy,
    proxyOther,
    resume: ({ request, params, ctx }) => deps.bridge.resume(request.method, params, ctx),
  };
}
