import { tenantScope, type Principal } from '@agentgw/auth';
import type { AuditTrail } from '@agentgw/audit';
import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import { egressRefusalOf, matchGlob, newId, toolNameProblem, type EgressRefusedError, type Clock, type ConfirmationGate, type HeldCall, type Logger, type RiskLevel } from '@agentgw/core';
import {
  isMcpUpstreamError,
  JSON_RPC,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type McpUpstreamClient,
  type UpstreamCallOptions,
  type UpstreamSession,
} from '@agentgw/mcp-client';
import type { ListItem, ListKind, ProviderLists } from './provider-lists.js';
import { addressableProvider, recheckReleasedCall, type Reauthenticate, type Release } from './released-call-check.js';
import { serverCapabilities, upstreamParams } from './revision-shapes.js';
import { ClientGone, GATEWAY_RPC, invalidParams, RpcError, toRpcError } from './rpc-errors.js';
import type { SessionClaims } from './session-ids.js';
import type { SessionStore } from './session-store.js';
import type { ShadowReport } from './shadowed-tools.js';
import { upstreamTarget } from './upstream-targets.js';

/** Which endpoint a message arrived on. */
export type McpEndpoint = { kind: 'unified'; providerFilter: readonly string[] | null } | { kind: 'proxy'; providerId: string };

/** Everything one JSON-RPC request is handled with. */
export interface McpRequestContext {
  principal: Principal;
  requestId: string;
  endpoint: McpEndpoint;
  /** The revision the client speaks on this request. */
  protocolVersion: string;
  /** The legacy session it belongs to (with the upstream sessions opened so far), if any. */
  session: { claims: SessionClaims; upstreams: Record<string, UpstreamSession> } | null;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Sends a notification on the response stream; null when the answer is a plain JSON body. */
  notify: ((notification: JsonRpcNotification) => void) | null;
  /** An exact-call approval token the client presented (X-Confirmation-Token or `_meta`). */
  confirmationToken: string | null;
  /** The request's `_meta.progressToken`, for progress notifications while a call is held. */
  progressToken: string | number | null;
  /** Authenticates the request's credentials again: a held call is re-checked once released. */
  reauthenticate: Reauthenticate;
}

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
  shadows: ShadowReport;
}

type Result = Record<string, unknown>;

/**
 * The MCP method layer shared by the unified endpoint and the per-provider proxy: tools/list
 * merging, the five-step tools/call (route → provider access → policy as the end user →
 * decision → audit), resources and prompts, and forwarding. Transport concerns (HTTP, SSE,
 * sessions ids, versions) stay in the routes.
 */
export class McpPipeline {
  constructor(private readonly deps: McpPipelineDeps) {}

  /** Answers one request; null when the client went away and there is nobody to answer. */
  async handle(request: JsonRpcRequest, ctx: McpRequestContext): Promise<{ response: JsonRpcResponse; status: number } | null> {
    try {
      const result = await this.dispatch(request, ctx);
      return { response: { jsonrpc: '2.0', id: request.id, result }, status: 200 };
    } catch (err) {
      if (err instanceof ClientGone || ctx.signal.aborted) return null;
      if (err instanceof UpstreamAnswer) return { response: { ...err.response, id: request.id }, status: 200 };
      const rpc = toRpcError(err, this.deps.logger);
      return { response: { jsonrpc: '2.0', id: request.id, error: rpc.toObject() }, status: rpc.status };
    }
  }

  private async dispatch(request: JsonRpcRequest, ctx: McpRequestContext): Promise<Result> {
    const params = request.params ?? {};
    switch (request.method) {
      case 'ping':
        return {};
      case 'server/discover':
        return { supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS], capabilities: serverCapabilities(ctx.endpoint) };
    }
    const agent = await this.activeAgent(ctx.principal);
    if (ctx.endpoint.kind === 'proxy') {
      const provider = await this.deps.catalog.providers.getFor(ctx.principal, ctx.endpoint.providerId);
      // The proxy checks provider-level access before anything reaches the provider.
      if (!(await this.mayReach(ctx.principal, provider))) throw denied('The agent has no access to this provider', 'high');
      return this.dispatchProxy(request.method, params, ctx, provider, agent);
    }
    switch (request.method) {
      case 'tools/list':
        return { tools: await this.mergedTools(ctx) };
      case 'tools/call':
        return this.callTool(params, ctx, agent);
      case 'resources/list':
        return { resources: await this.mergedList(ctx, 'resources', (item) => stringOf(item.uri)) };
      case 'resources/templates/list':
        return { resourceTemplates: await this.mergedList(ctx, 'resourceTemplates', (item) => stringOf(item.uriTemplate)) };
      case 'prompts/list':
        return { prompts: await this.mergedList(ctx, 'prompts', (item) => stringOf(item.name)) };
      case 'resources/read':
        return this.forwardToOwner(ctx, 'resources', 'uri', request.method, params);
      case 'prompts/get':
        return this.forwardToOwner(ctx, 'prompts', 'name', request.method, params);
      default:
        throw new RpcError(JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${request.method}`);
    }
  }

  private async dispatchProxy(method: string, params: Result, ctx: McpRequestContext, provider: ProviderRecord, agent: AgentInfo): Promise<Result> {
    if (method === 'tools/list') return { tools: await this.providerTools(ctx, provider) };
    if (method === 'tools/call') return this.callTool(params, ctx, agent, provider);
    // Only the two tool methods above go through the policy, so no spelling of one is forwarded.
    if (method.trim().toLowerCase().startsWith('tools/')) throw new RpcError(JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${method}`);
    return this.forward(provider, method, params, ctx);
  }

  /** The agent acting, which must exist and be enabled; the kill switch answers 403 at once on every replica. */
  private async activeAgent(principal: Principal): Promise<AgentInfo> {
    if (principal.agentId === null) return null;
    const agent = await this.deps.catalog.agents.get(principal.agentId);
    if (!agent || !agent.isActive) throw new RpcError(GATEWAY_RPC.DENIED, 'Agent is disabled', 403, { code: 'AGENT_DISABLED' });
    return { requireConfirmation: agent.requireConfirmation };
  }

  /**
   * Providers a tool name may route to: global and the acting tenant's (an admin's calls too), or
   * exactly those `providers=` names among the ones the caller may address (an admin may name
   * another tenant's provider explicitly; anyone else never sees it).
   */
  private async routingSet(principal: Principal, endpoint: McpEndpoint): Promise<ProviderRecord[]> {
    const filter = endpoint.kind === 'unified' ? endpoint.providerFilter : null;
    if (filter === null) return this.deps.catalog.providers.routableFor(principal);
    return (await this.deps.catalog.providers.visibleTo(principal)).filter((p) => filter.includes(p.id));
  }

  /** Provider-level access: an agent needs an allow-class rule naming the provider (or `*`); a user alone is decided per tool. */
  private async mayReach(principal: Principal, provider: ProviderRecord): Promise<boolean> {
    if (principal.agentId === null) return true;
    return this.deps.catalog.rules.providerAllowed({ agentId: principal.agentId, tenantId: tenantScope(principal), providerId: provider.id });
  }

  private decide(principal: Principal, providerId: string, toolName: string) {
    return this.deps.catalog.rules.decide({
      agentId: principal.agentId,
      userId: principal.endUserId ?? principal.userId,
      tenantId: tenantScope(principal),
      providerId,
      toolName,
    });
  }

  private listTarget(provider: ProviderRecord) {
    return upstreamTarget(provider, this.deps.catalog.providers.authSecret(provider), null);
  }

  /**
   * The merged tools/list: every reachable provider's list in parallel (each with its own
   * deadline; a failed one is left out), each name once and from the provider tools/call routes
   * it to, denied tools removed. Tools a routing decision hides are reported as shadowed.
   */
  private async mergedTools(ctx: McpRequestContext): Promise<ListItem[]> {
    const providers = await this.routingSet(ctx.principal, ctx.endpoint);
    const reachable = await this.reachable(ctx.principal, providers);
    const lists = await Promise.all(reachable.map((p) => this.deps.lists.get(p, this.listTarget(p), 'tools')));
    const tools: ListItem[] = [];
    const seen = new Set<string>();
    for (const [i, provider] of reachable.entries()) {
      for (const tool of lists[i]!.items ?? []) {
        const name = toolNameOf(tool);
        if (name === null || seen.has(name)) continue;
        const owner = this.deps.catalog.providers.route(name, providers);
        if (owner?.id !== provider.id) {
          this.deps.shadows.report(name, provider, owner);
          continue;
        }
        if ((await this.decide(ctx.principal, provider.id, name)).action === 'deny') continue;
        seen.add(name);
        tools.push(tool);
      }
    }
    return tools;
  }

  /** One provider's tools for the proxy: those its pattern claims (as on the unified endpoint), denied tools removed. */
  private async providerTools(ctx: McpRequestContext, provider: ProviderRecord): Promise<ListItem[]> {
    const list = await this.deps.lists.get(provider, this.listTarget(provider), 'tools');
    if (list.refusal) throw egressRefused(list.refusal, provider.id);
    if (list.items === null) throw new RpcError(GATEWAY_RPC.UPSTREAM_FAILED, 'The provider did not list its tools', 502, { reason: list.failure });
    const tools: ListItem[] = [];
    for (const tool of list.items) {
      const name = toolNameOf(tool);
      if (name === null || !matchGlob(provider.pattern, name)) continue;
      if ((await this.decide(ctx.principal, provider.id, name)).action !== 'deny') tools.push(tool);
    }
    return tools;
  }

  private async reachable(principal: Principal, providers: ProviderRecord[]): Promise<ProviderRecord[]> {
    const allowed = await Promise.all(providers.map((p) => this.mayReach(principal, p)));
    return providers.filter((_, i) => allowed[i]);
  }

  /** Resources, templates or prompts of every reachable provider, first in routing order winning a key. */
  private async mergedList(ctx: McpRequestContext, kind: ListKind, keyOf: (item: ListItem) => string | null): Promise<ListItem[]> {
    const reachable = await this.reachable(ctx.principal, await this.routingSet(ctx.principal, ctx.endpoint));
    const lists = await Promise.all(reachable.map((p) => this.deps.lists.get(p, this.listTarget(p), kind)));
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

  /** resources/read and prompts/get on the unified endpoint: to the first reachable provider listing that uri or name. */
  private async forwardToOwner(ctx: McpRequestContext, kind: ListKind, field: 'uri' | 'name', method: string, params: Result): Promise<Result> {
    const key = params[field];
    if (typeof key !== 'string') throw invalidParams(`params.${field} must be a string`);
    for (const provider of await this.reachable(ctx.principal, await this.routingSet(ctx.principal, ctx.endpoint))) {
      const list = await this.deps.lists.get(provider, this.listTarget(provider), kind);
      if ((list.items ?? []).some((item) => item[field] === key)) return this.forward(provider, method, params, ctx);
    }
    if (kind === 'resources') throw new RpcError(GATEWAY_RPC.RESOURCE_NOT_FOUND, 'Resource not found', 200, { uri: key });
    throw invalidParams(`Unknown prompt: ${key}`);
  }

  /** tools/call, the spec's five steps in order. */
  private async callTool(params: Result, ctx: McpRequestContext, agent: AgentInfo, fixed?: ProviderRecord): Promise<Result> {
    const name = params.name;
    if (typeof name !== 'string') throw invalidParams('params.name must be a non-empty string');
    const problem = toolNameProblem(name);
    if (problem !== null) throw invalidParams(`params.name ${problem}`);
    const args = params.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw invalidParams('params.arguments must be an object');
    const { principal } = ctx;

    // 1. The provider that owns the tool (pattern, then priority).
    const provider = fixed ?? this.deps.catalog.providers.route(name, await this.routingSet(ctx.principal, ctx.endpoint));
    if (!provider) throw invalidParams(`Unknown tool: ${name}`);

    const auditId = newId();
    const base = {
      id: auditId,
      userId: principal.userId,
      agentId: principal.agentId,
      endUserId: principal.endUserId,
      providerId: provider.id,
      tenantId: principal.tenantId,
      toolName: name,
      arguments: args,
    };
    // The proxy's provider owns only the names its pattern matches, as routing on the unified endpoint.
    if (fixed && !matchGlob(fixed.pattern, name)) {
      await this.record(() => this.deps.audit.open({ ...base, status: 'rejected' }), () => this.deps.audit.update(auditId, { error: OUTSIDE_PATTERN }));
      throw denied(OUTSIDE_PATTERN, 'high', auditId);
    }
    // 2. Provider-level access for the agent (the proxy checked it before dispatching here).
    if (!fixed && !(await this.mayReach(principal, provider))) {
      await this.record(() => this.deps.audit.open({ ...base, status: 'rejected' }), () => this.deps.audit.update(auditId, { error: 'no provider access' }));
      throw denied('The agent has no access to this provider', 'high', auditId);
    }
    // 3. The tool policy, as the real end user.
    const decision = await this.decide(principal, provider.id, name);
    // 4. The decision.
    if (decision.action === 'deny') {
      const reason = decision.matchedRule ? 'Denied by an access rule' : 'No access rule allows this tool';
      await this.record(() => this.deps.audit.open({ ...base, status: 'rejected' }), () => this.deps.audit.update(auditId, { error: reason }));
      throw denied(reason, decision.risk, auditId);
    }
    await this.assertListed(provider, name);
    // Enqueued beside the call, awaited before the answer: an acknowledged call is always audited.
    const opened = this.record(() => this.deps.audit.open({ ...base, status: 'pending' }));
    let target = { provider, ctx };
    if (decision.action === 'require_confirmation' || agent?.requireConfirmation) {
      const confirmedBy = await this.hold(ctx, opened, { auditId, agentId: principal.agentId, userId: principal.userId, endUserId: principal.endUserId, tenantId: principal.tenantId, providerId: provider.id, toolName: name, arguments: args as Record<string, unknown>, risk: decision.risk });
      const release = await this.recheck(ctx, provider.id, name, fixed !== undefined);
      if (!release.ok) {
        await Promise.all([opened, this.record(() => this.deps.audit.update(auditId, { status: 'rejected', confirmedBy, error: release.reason }))]);
        throw denied(release.reason, decision.risk, auditId);
      }
      void this.record(() => this.deps.audit.update(auditId, { status: 'confirmed', confirmedBy }));
      // The signal was read by the hold already, so copying the context creates nothing new.
      target = { provider: release.provider, ctx: { ...ctx, principal: release.principal } };
    }
    // 5. Forward and audit the outcome.
    const started = this.deps.clock.now().getTime();
    const duration = () => this.deps.clock.now().getTime() - started;
    try {
      const result = await this.forward(target.provider, 'tools/call', params, target.ctx);
      await Promise.all([opened, this.record(() => this.deps.audit.update(auditId, { status: result.isError === true ? 'failed' : 'completed', result, duration: duration() }))]);
      return result;
    } catch (err) {
      const error = err instanceof UpstreamAnswer && 'error' in err.response ? err.response.error.message : err instanceof Error ? err.message : 'failed';
      await Promise.all([opened, this.record(() => this.deps.audit.update(auditId, { status: 'failed', error, duration: duration() }))]);
      throw err;
    }
  }

  /**
   * Only a name the provider listed goes out: a variant of a denied name (case, look-alike) that
   * no rule matched never reaches an upstream that matches names loosely. Answered from the
   * cached list; a provider whose list cannot be had is not called unchecked (502).
   */
  private async assertListed(provider: ProviderRecord, name: string): Promise<void> {
    const listing = await this.deps.lists.listed(provider, () => this.listTarget(provider), name);
    if (listing.kind === 'listed') return;
    if (listing.kind === 'unlisted') throw invalidParams(`Unknown tool: ${name}`);
    if (listing.refusal) throw egressRefused(listing.refusal, provider.id);
    throw new RpcError(GATEWAY_RPC.UPSTREAM_FAILED, 'The provider did not list its tools, so the call cannot be checked', 502, { providerId: provider.id, reason: listing.failure });
  }

  /**
   * The kill switch and the policy for a call a human released: re-run against what holds now
   * (the proxy's provider by id, else the route in the caller's routing set).
   */
  private recheck(ctx: McpRequestContext, providerId: string, toolName: string, fixed: boolean): Promise<Release> {
    const { catalog } = this.deps;
    return recheckReleasedCall(catalog, {
      principal: ctx.principal,
      reauthenticate: ctx.reauthenticate,
      providerId,
      toolName,
      locate: async (principal) => (fixed ? addressableProvider(catalog, principal, providerId) : catalog.providers.route(toolName, await this.routingSet(principal, ctx.endpoint))),
    });
  }

  /** Holds a require_confirmation call until a human decides; returns who confirmed (null for a redeemed token), throws otherwise. */
  private async hold(ctx: McpRequestContext, opened: Promise<void>, call: HeldCall): Promise<string | null> {
    if (ctx.confirmationToken !== null && (await this.deps.gate.redeem(ctx.confirmationToken, call))) return null;
    const { progressToken } = ctx;
    const outcome = await this.deps.gate.hold(call, {
      signal: ctx.signal,
      onStatus: ({ confirmationId, message, elapsedMs }) => {
        if (!ctx.notify) return;
        if (progressToken !== null) {
          ctx.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: elapsedMs, message } });
        }
        ctx.notify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'agentgw/confirmation', data: { confirmationId, message, elapsedMs } } });
      },
    });
    switch (outcome.decision) {
      case 'confirmed':
        return outcome.confirmedBy;
      case 'expired':
        throw new ClientGone();
      default:
        await Promise.all([opened, this.record(() => this.deps.audit.update(call.auditId, { status: 'rejected', error: outcome.reason }))]);
        throw new RpcError(GATEWAY_RPC.CONFIRMATION_REJECTED, outcome.reason, 403, {
          decision: outcome.decision,
          reason: outcome.reason,
          confirmationId: outcome.confirmationId,
          auditId: call.auditId,
        });
    }
  }

  /**
   * Sends a request to a provider with its auth and the caller's identity, on the session's
   * upstream session for that provider (opened and stored on first use) or the shared one.
   * An upstream JSON-RPC error is passed on as it is.
   */
  private async forward(provider: ProviderRecord, method: string, params: Result, ctx: McpRequestContext): Promise<Result> {
    const target = upstreamTarget(provider, this.deps.catalog.providers.authSecret(provider), { principal: ctx.principal, requestId: ctx.requestId });
    const options: UpstreamCallOptions = {
      signal: ctx.signal,
      timeoutMs: this.deps.upstreamTimeoutMs,
      onNotification: (n: JsonRpcNotification) => {
        this.deps.lists.noticed(provider.id, n.method);
        if (n.method === 'notifications/progress' || n.method === 'notifications/message') ctx.notify?.(n);
      },
      session: undefined,
    };
    try {
      let session: UpstreamSession | undefined;
      if (ctx.session) {
        session = ctx.session.upstreams[provider.id];
        if (!session) {
          session = await this.deps.client.open(target, options);
          await this.rememberUpstream(ctx, provider.id, session);
        }
      }
      options.session = session;
      const { response, session: used } = await this.deps.client.request(target, method, upstreamParams(params), options);
      if (ctx.session && session && used.sessionId !== session.sessionId) await this.rememberUpstream(ctx, provider.id, used);
      if ('error' in response) throw new UpstreamAnswer(response);
      return response.result;
    } catch (err) {
      if (!isMcpUpstreamError(err)) throw err;
      if (err.kind === 'aborted') throw new ClientGone();
      if (err.kind === 'timeout') throw new RpcError(GATEWAY_RPC.UPSTREAM_TIMEOUT, 'The provider did not answer in time', 504, { providerId: provider.id });
      const refused = egressRefusalOf(err);
      if (refused) throw egressRefused(refused, provider.id);
      throw new RpcError(GATEWAY_RPC.UPSTREAM_FAILED, 'The provider could not be reached', 502, { providerId: provider.id, reason: err.message });
    }
  }

  private async rememberUpstream(ctx: McpRequestContext, providerId: string, session: UpstreamSession): Promise<void> {
    if (!ctx.session) return;
    ctx.session.upstreams[providerId] = session;
    await this.deps.sessions.setUpstream(ctx.session.claims.sid, providerId, session);
  }

  /** Audit jobs are enqueued beside the call, never awaited on its path; a failure is logged. */
  /**
   * Enqueues audit records in order. The caller awaits it before answering, so an acknowledged
   * call's records are in the queue; a queue failure is logged, not turned into a failed call.
   */
  private async record(...steps: (() => Promise<unknown>)[]): Promise<void> {
    try {
      for (const step of steps) await step();
    } catch (err) {
      this.deps.logger.error({ reason: err instanceof Error ? err.message : String(err) }, 'could not enqueue audit record');
    }
  }
}

type AgentInfo = { requireConfirmation: boolean } | null;

/** An upstream's JSON-RPC error, passed on to the client unchanged. */
class UpstreamAnswer extends Error {
  constructor(readonly response: Extract<JsonRpcResponse, { error: unknown }>) {
    super(response.error.message);
  }
}

/** The egress policy refused the provider's address: a refusal (403, never contacted), not an upstream failure. */
const egressRefused = (refused: EgressRefusedError, providerId: string) =>
  new RpcError(GATEWAY_RPC.DENIED, refused.message, 403, { providerId, code: refused.code, ...refused.details });

/** The refusal of a tool name the provider's pattern does not claim (proxy and tool gate). */
export const OUTSIDE_PATTERN = "The tool name is outside the provider's pattern";

const denied = (reason: string, risk: RiskLevel, auditId?: string) =>
  new RpcError(GATEWAY_RPC.DENIED, reason, 403, { decision: 'denied', reason, risk, ...(auditId ? { auditId } : {}) });

const stringOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A listed tool's name, or null for one tools/call refuses (over the glob cap, which would fail the whole list; hidden characters; surrounding spaces). */
const toolNameOf = (tool: ListItem): string | null => {
  const name = stringOf(tool.name);
  return name !== null && toolNameProblem(name) === null ? name : null;
};
