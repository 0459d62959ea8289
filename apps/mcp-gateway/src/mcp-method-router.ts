import type { ProviderRecord } from '@agentgw/catalog';
import type { Logger } from '@agentgw/core';
import { isModernVersion, JSON_RPC, type JsonRpcRequest } from '@agentgw/mcp-client';
import { addressedProvider } from './addressed-provider.js';
import type { McpAnswer, McpRequestContext, McpResult } from './mcp-context.js';
import { ClientGone, RpcError, toRpcError } from './rpc-errors.js';
import { carriesBridgeState } from './relay/bridge-state.js';
import { denied } from './tool-call/tool-call-errors.js';
import { agentStanding, mayReach, NO_PROVIDER_ACCESS, type ToolCallCatalog } from './tool-call/tool-access.js';
import { UpstreamAnswer } from './upstream-forwarding.js';

/** The acting agent's standing, read once per request (the kill switch answered already). */
export type AgentStanding = Awaited<ReturnType<typeof agentStanding>>;

/** One request as a handler gets it: the request, its params (`{}` when absent), its context and the agent's standing. */
export interface RoutedRequest {
  request: JsonRpcRequest;
  params: McpResult;
  ctx: McpRequestContext;
  agent: AgentStanding;
}

/** A handler of one method on the unified endpoint. */
export type MethodHandler = (routed: RoutedRequest) => Promise<McpResult>;
/** A handler of one method on the proxy: the provider is the endpoint's, its access checked. */
export type ProxyMethodHandler = (routed: RoutedRequest & { provider: ProviderRecord }) => Promise<McpResult>;

/** Which handler answers which method, per endpoint. */
export interface McpMethodTable {
  /** Answered before anything is read (ping, server/discover): no kill switch, no provider. */
  open: ReadonlyMap<string, (routed: Omit<RoutedRequest, 'agent'>) => Promise<McpResult>>;
  /** The unified endpoint's methods; any other is -32601. */
  unified: ReadonlyMap<string, MethodHandler>;
  /** The unified endpoint's search surface answers first when it applies (null: it does not). */
  searchSurface: (routed: RoutedRequest) => Promise<McpResult | null>;
  /** The proxy's own methods. */
  proxy: ReadonlyMap<string, ProxyMethodHandler>;
  /** What the proxy does with any other method: passes it to its provider. */
  proxyOther: ProxyMethodHandler;
  /** A retry of a call bridged to input_required rounds (its requestState is the gateway's): continued, not decided anew. */
  resume: MethodHandler;
}

/** What routing reads: the catalog for the kill switch and the proxy's provider access, the logger for unexpected errors. */
export interface McpMethodRouterDeps {
  catalog: ToolCallCatalog;
  logger: Logger;
  table: McpMethodTable;
}

/**
 * The MCP method layer shared by the unified endpoint and the per-provider proxy: answers one
 * JSON-RPC request by its method through the table (after the kill switch; on the proxy after its
 * provider-access check), and turns what the handler throws into the JSON-RPC answer. Transport
 * concerns (HTTP, SSE, session ids, versions) stay in mcp-transport/.
 */
export class McpMethodRouter {
  constructor(private readonly deps: McpMethodRouterDeps) {}

  /** Answers one request; null when the client went away and there is nobody to answer. */
  async handle(request: JsonRpcRequest, ctx: McpRequestContext): Promise<McpAnswer | null> {
    try {
      const result = await this.route(request, ctx);
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

  private async route(request: JsonRpcRequest, ctx: McpRequestContext): Promise<McpResult> {
    const { catalog, table } = this.deps;
    const params = request.params ?? {};
    const open = table.open.get(request.method);
    if (open) return open({ request, params, ctx });
    // The kill switch answers 403 at once on every replica, whatever the method.
    const agent = await agentStanding(catalog, ctx.principal);
    const routed: RoutedRequest = { request, params, ctx, agent };
    // The retry of a bridged call continues the call its owner started (decided and audited then).
    const resumed = carriesBridgeState(params);
    if (ctx.endpoint.kind === 'proxy') {
      const provider = await addressedProvider(catalog.providers, ctx.principal, ctx.endpoint.providerId);
      // The proxy checks provider-level access before anything reaches the provider.
      if (!(await mayReach(catalog, ctx.principal, provider.id))) throw denied(NO_PROVIDER_ACCESS, 'high');
      if (resumed) return table.resume(routed);
      const handler = table.proxy.get(request.method);
      if (handler) return handler({ ...routed, provider });
      // Only the proxy's own tool methods go through the policy, so no other spelling of one is forwarded.
      if (request.method.trim().toLowerCase().startsWith('tools/')) throw methodNotFound(request.method);
      return table.proxyOther({ ...routed, provider });
    }
    if (resumed) return table.resume(routed);
    const searched = await table.searchSurface(routed);
    if (searched !== null) return searched;
    const handler = table.unified.get(request.method);
    if (!handler) throw methodNotFound(request.method);
    return handler(routed);
  }
}

/** -32601 for a method the endpoint does not answer. */
export const methodNotFound = (method: string): RpcError =>
  new RpcError(JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${method}`);

/** A gateway error's HTTP status; on the 2026-07-28 wire an unknown method is 404 (its transport says so). */
const errorStatus = (rpc: RpcError, protocolVersion: string): number =>
  rpc.code === JSON_RPC.METHOD_NOT_FOUND && isModernVersion(protocolVersion) ? 404 : rpc.status;
