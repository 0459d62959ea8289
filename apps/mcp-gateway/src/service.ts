import { createAuditTrail, type AuditTrail } from '@agentgw/audit';
import { MCP_PROXY_PREFIX, MCP_UNIFIED_PATH, secretBoxFor } from '@agentgw/auth';
import { createConfirmationGate, maxPendingOf } from '@agentgw/confirmations';
import {
  CallQuota,
  callQuotaLimitsFrom,
  createEgressDispatcher,
  egressPolicyFromConfig,
  type ClientConfirmations,
  type ConfirmationGate,
} from '@agentgw/core';
import { McpUpstreamClient } from '@agentgw/mcp-client';
import { defineService, openApiApp, type ServiceDeps, type ServiceRuntime } from '@agentgw/service-kit';
import { AuditIdSigner } from './audit-ids.js';
import { documentMcpEndpoints } from './mcp.openapi.js';
import { mcpRoutes } from './mcp.routes.js';
import { McpMethodRouter } from './mcp-method-router.js';
import { mcpMethodTable } from './mcp-methods.js';
import { createOriginPolicy } from './origins.js';
import { ProtectedResources } from './protected-resource/protected-resource.js';
import { protectedResourceRoutes } from './protected-resource/protected-resource.routes.js';
import { ProviderLists } from './provider-view/provider-lists.js';
import { refusingConfirmationGate } from './refusing-confirmation-gate.js';
import { SessionIdCodec } from './session-ids.js';
import { TaskIdCodec } from './extensions/task-ids.js';
import { MemorySessionStore } from './memory-session-store.js';
import { RedisSessionStore } from './redis-session-store.js';
import type { SessionStore } from './session-store.js';
import { MemoryResumptionStore, RedisResumptionStore } from './stream-resumption/resumption-store.js';
import { MemoryBridgeStore, RedisBridgeStore } from './relay/bridge-store.js';
import { LegacyRequestBridge } from './relay/legacy-request-bridge.js';
import { MemoryRelayStore, RedisRelayStore } from './relay/relay-store.js';
import { announcingUpstreams } from './relay/upstream-server-streams.js';
import { ServerRequestRelay } from './relay/server-request-relay.js';
import { ClientCarrier, consolePageOf } from './tool-call/client-carrier.js';
import { HeldCallRounds } from './tool-call/held-call-round.js';
import { HeldCallTasks } from './tool-call/held-call-task.js';
import { HeldTaskNotices } from './tool-call/held-task-notices.js';
import { MemoryHeldTaskStore, RedisHeldTaskStore } from './tool-call/held-task-store.js';
import { HeldRoundStates } from './tool-call/held-round-states.js';
import { ToolGate } from './tool-gate.js';
import { OpenRequests } from './mcp-transport/open-requests.js';
import { sweepCutoffs, sweepLeftOpen } from './left-open-sweep.js';
import { toolGateRoutes } from './tool-gate.routes.js';
import { ExposedNames } from './tool-names/exposed-names.js';
import { exposedToolsRoutes, toolCollisionsRoutes } from './tool-names/tool-collisions.routes.js';
import { KyselyToolNameStore } from './tool-names/tool-name-store.js';
import { ToolNaming } from './tool-names/tool-naming.js';
import { ToolPinStore } from './tool-pins/tool-pin-store.js';
import { ToolPins } from './tool-pins/tool-pins.js';
import { recheckPinsOnUpstreamChange } from './tool-pins/pin-recheck.js';
import { tokenExchangeFor } from './upstream-auth/exchanged-tokens.js';
import { userCredentialsFor } from './upstream-auth/user-credentials.js';
import { RequestTargets } from './upstream-auth/request-targets.js';

/** Collaborators a host may supply (tests, the all-in-one); each defaults to this service's own. */
export interface McpGatewayOptions {
  /** The confirmation hub's gate (default: refuses, see NO_CONFIRMATION_HUB); closed on shutdown when it can be. */
  confirmationGate?: ConfirmationGate & { close?(): Promise<void> };
  /** Where a person's answer from their own MCP client goes (the hub's gate); unset: no client carrier. */
  clientConfirmations?: ClientConfirmations;
  audit?: AuditTrail;
  sessions?: SessionStore;
  client?: McpUpstreamClient;
}

/** Builds mcp-gateway's runtime: the MCP endpoints, the tool gate and the tool-collisions report. */
export function createMcpGateway(deps: ServiceDeps, options: McpGatewayOptions = {}): ServiceRuntime {
  const { config, logger, clock, bus } = deps;
  // The process's started catalog reader, shared with auth and every other service of the host.
  const { catalog } = deps;
  const audit = options.audit ?? createAuditTrail({ queue: deps.queue, clock });
  const gate = options.confirmationGate ?? refusingConfirmationGate({ audit, logger });
  const ownClient = options.client === undefined;
  const client =
    options.client ??
    new McpUpstreamClient({
      clientInfo: { name: 'agentgw-mcp-gateway', version: '1.0.0' },
      timeoutMs: config.MCP_UPSTREAM_TIMEOUT_MS,
      // One keep-alive pool per upstream origin, behind the egress policy.
      dispatcher: createEgressDispatcher(egressPolicyFromConfig(config), {
        agent: { keepAliveTimeout: 30_000, connections: 256 },
      }),
    });
  // Sessions, relayed server requests and paused streams live on the shell's Redis when there is one (any replica serves a client).
  const { redis } = deps;
  const sessions = options.sessions ?? (redis ? new RedisSessionStore(redis) : new MemorySessionStore(clock));
  const lists = new ProviderLists({ client, clock, bus, logger }, config.MCP_LIST_TIMEOUT_MS);
  // A relayed request's answer may reach any replica; so may a paused answer stream's (SEP-1699) resume, woken there by the bus.
  const relayStore = redis ? new RedisRelayStore(redis, clock) : new MemoryRelayStore(clock);
  const resumption = redis ? new RedisResumptionStore(redis, bus) : new MemoryResumptionStore(clock);
  const userCredentials = userCredentialsFor(deps);
  const tokenExchange = tokenExchangeFor(deps);
  const targets = new RequestTargets({ catalog, userCredentials, exchange: tokenExchange });
  const relay = new ServerRequestRelay({ store: relayStore, client, catalog, targets, audit, logger, bus });
  const bridgeStore = redis ? new RedisBridgeStore(redis, clock) : new MemoryBridgeStore(clock);
  const bridge = new LegacyRequestBridge({ store: bridgeStore, relay, bus, logger });
  const exposedNames = new ExposedNames({ store: new KyselyToolNameStore(deps.db), bus, logger });
  const names = new ToolNaming(exposedNames);
  const pins = new ToolPins({ store: new ToolPinStore(deps.db), bus, audit, clock, logger });
  const stopPinRecheck = recheckPinsOnUpstreamChange({ lists, pins, catalog, logger });
  const taskIds = new TaskIdCodec(secretBoxFor(config));
  const hub = options.clientConfirmations;
  const consolePage = consolePageOf(config);
  const carrier = hub ? new ClientCarrier({ relay, answers: hub, consolePage, logger }) : null;
  const rounds = hub
    ? new HeldCallRounds({ hub, states: new HeldRoundStates(secretBoxFor(config)), consolePage })
    : null;
  // A held call's task is polled on any replica: its entry and result live on the shell's Redis when there is one.
  const heldTaskStore = redis ? new RedisHeldTaskStore(redis, clock) : new MemoryHeldTaskStore(clock);
  const tasks = hub ? new HeldCallTasks({ hub, store: heldTaskStore, ids: taskIds, consolePage, clock, logger }) : null;
  const heldNotices = hub ? new HeldTaskNotices({ bus, store: heldTaskStore, logger }) : null;
  const table = mcpMethodTable({
    catalog,
    client,
    lists,
    sessions: announcingUpstreams(sessions, bus),
    audit,
    gate,
    clock,
    logger,
    upstreamTimeoutMs: config.MCP_UPSTREAM_TIMEOUT_MS,
    relay,
    bridge,
    names,
    pins,
    taskIds,
    userCredentials,
    tokenExchange,
    bus,
    carrier,
    rounds,
    tasks,
    heldNotices,
  });
  const router = new McpMethodRouter({ catalog, logger, table });
  const streams = new Set<() => void>();
  const open = new OpenRequests();
  const platformKeys = secretBoxFor(config);

  const resources = new ProtectedResources(config);
  const routes = openApiApp();
  routes.route('/', protectedResourceRoutes(resources));
  routes.route('/api/v1/mcp/tool-collisions', toolCollisionsRoutes({ auth: deps.auth, catalog, lists, names }));
  routes.route('/api/v1/mcp/exposed-tools', exposedToolsRoutes({ auth: deps.auth, catalog, lists, names }));
  routes.route(
    '/',
    mcpRoutes({
      auth: deps.auth,
      catalog,
      client,
      router,
      sessions,
      codec: new SessionIdCodec(platformKeys),
      origins: createOriginPolicy(config),
      bus,
      clock,
      logger,
      streams,
      quota: new CallQuota(deps.rateLimiter, callQuotaLimitsFrom(config)),
      relay,
      resources,
      resumption,
      targets,
      listenHeartbeatMs: config.SSE_HEARTBEAT_MS,
      open,
    }),
  );
  documentMcpEndpoints(routes);
  routes.route(
    '/api/v1/tool-gate',
    toolGateRoutes({
      auth: deps.auth,
      toolGate: new ToolGate({ catalog, audit, gate, logger, auditIds: new AuditIdSigner(platformKeys), pins }),
    }),
  );

  return {
    routes,
    async start() {
      await lists.start();
      await exposedNames.start();
      await pins.start();
      await sweepLeftOpen({ ...deps, audit }, sweepCutoffs(deps));
    },
    // Before any service stops: every open MCP request is answered, held calls are closed and recorded.
    async settle({ deadlineMs }) {
      open.beginStopping();
      await options.confirmationGate?.close?.();
      await open.finish(deadlineMs / 2);
      // An in-process queue dies with the process: the records just written reach the audit writer first.
      if (!redis) await deps.queue.barrier(['audit-bulk'], deadlineMs / 4);
    },
    async stop() {
      for (const end of [...streams]) end();
      await bridge.stop();
      await relay.stop();
      await resumption.stop();
      await heldNotices?.stop();
      await lists.stop();
      await exposedNames.stop();
      stopPinRecheck();
      await pins.stop();
      await sessions.close();
      if (ownClient) await client.destroy();
    },
  };
}

/** mcp-gateway: the unified MCP endpoint, the per-provider MCP proxy and the tool gate. */
export const mcpGatewayService = defineService({
  name: 'mcp-gateway',
  defaultPort: 7603,
  hotPaths: [MCP_UNIFIED_PATH, MCP_PROXY_PREFIX],
  create: (deps) => {
    // Held calls wait on the confirmation hub's decisions over the bus (any replica decides).
    const confirmationGate = createConfirmationGate(deps, {
      timeoutMs: deps.config.CONFIRMATION_TIMEOUT_MS,
      maxPending: maxPendingOf(deps.config),
    });
    return createMcpGateway(deps, { confirmationGate, clientConfirmations: confirmationGate });
  },
});
