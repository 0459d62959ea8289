import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { egressRefusalOf } from '@agentgw/core';
import {
  isMcpUpstreamError,
  JSON_RPC,
  type JsonRpcNotification,
  type JsonRpcResponse,
  type McpUpstreamClient,
  type UpstreamCallOptions,
  type UpstreamSession,
  type UpstreamTarget,
} from '@agentgw/mcp-client';
import type { McpRequestContext, McpResult } from './mcp-context.js';
import { honourClientCapabilities } from './methods/input-required.js';
import type { BridgeableCall, BridgeFailure } from './relay/bridgeable-call.js';
import { carriesBridgeState } from './relay/bridge-state.js';
import type { LegacyRequestBridge } from './relay/legacy-request-bridge.js';
import { bridgeInputRequired } from './relay/mrtr-bridge.js';
import type { ClientChannel, RelayOrigin } from './relay/relay-contract.js';
import type { ServerRequestRelay } from './relay/server-request-relay.js';
import { upstreamParams } from './revision-shapes.js';
import { ClientGone, egressRefused, GATEWAY_RPC, RpcError } from './rpc-errors.js';
import type { SessionStore } from './session-store.js';
import { lacksUserAuth } from './provider-view/shared-view.js';
import { carriesUserAuth, type RequestTargets, type TargetRequest } from './upstream-auth/request-targets.js';

/** What forwarding needs: the upstream client, where upstream notifications, server requests and sessions go, and the targets. */
export interface UpstreamForwardingDeps {
  client: McpUpstreamClient;
  upstreamTimeoutMs: number;
  targets: RequestTargets;
  /** Told of every upstream notification (a `list_changed` drops the cached lists). */
  noticed(providerId: string, method: string): void;
  /** Passes upstream server requests to the client and its answers back (`relay/`). */
  relay: ServerRequestRelay;
  /** Turns a legacy upstream's server requests into input_required rounds for a 2026-07-28 client (relay/legacy-request-bridge.ts). */
  bridge: Pick<LegacyRequestBridge, 'forRequest'>;
  sessions: Pick<SessionStore, 'setUpstream'>;
  /** A task result's id as the client knows it (extensions/task-ids.ts). */
  sealTask(provider: ProviderRecord, result: McpResult, principal: Principal): McpResult;
}

/** The tools/call a forwarded request is: its audit id, tool and the headers it carries upstream. */
export type ForwardedCall = {
  auditId: string;
  toolName: string;
  paramHeaders: Record<string, string> | null;
  /** Records the call's outcome once the upstream gives it (after any bridged rounds), passing it on. */
  recorded(outcome: Promise<McpResult>): Promise<McpResult>;
};

/**
 * Sends a request to a provider with its auth and the caller's identity, on the session's
 * upstream session for that provider (opened and remembered on first use) or the shared one;
 * bridges an input_required result for a legacy client (relay/mrtr-bridge.ts), and a legacy
 * upstream's server requests for a 2026-07-28 client (relay/legacy-request-bridge.ts); maps
 * upstream failures to the gateway's errors. An upstream JSON-RPC error is passed on as it is
 * (`UpstreamAnswer`).
 */
export class UpstreamForwarding {
  constructor(private readonly deps: UpstreamForwardingDeps) {}

  /** The answer to the client: the upstream's (recorded, for a tools/call), or a bridged round while the upstream asks. */
  forward(
    provider: ProviderRecord,
    method: string,
    params: McpResult,
    ctx: McpRequestContext,
    call: ForwardedCall | null = null,
  ): Promise<McpResult> {
    const bridge = this.deps.bridge.forRequest(ctx, method);
    const upstream = this.answered(provider, method, params, ctx, call, bridge);
    const answered = bridge ? bridge.explained(upstream) : upstream;
    const outcome = call ? call.recorded(answered) : answered;
    return bridge ? bridge.answer(outcome, failureOf) : outcome;
  }

  private async answered(
    provider: ProviderRecord,
    method: string,
    params: McpResult,
    ctx: McpRequestContext,
    call: ForwardedCall | null,
    bridge: BridgeableCall | null,
  ): Promise<McpResult> {
    const target = await this.targetOf(provider, ctx, call);
    const origin: RelayOrigin = {
      provider,
      target,
      principal: ctx.principal,
      channel: bridge?.channel ?? ctx.channel,
      capabilities: ctx.clientCapabilities,
      call,
    };
    const options = this.optionsOf(provider, ctx, origin, bridge);
    try {
      options.session = await this.upstreamSession(provider, ctx, target, options);
      const {
        response,
        session: used,
        status,
      } = await this.deps.client.request(target, method, upstreamParams(params), options);
      if (ctx.session && options.session && used.sessionId !== options.session.sessionId)
        await this.rememberUpstream(ctx, provider.id, used);
      if ('error' in response) throw new UpstreamAnswer(response, status);
      // MRTR for a legacy client (it has a stream): the gateway asks it and retries upstream (relay/mrtr-bridge.ts).
      const result =
        response.result.resultType === 'input_required' && ctx.channel
          ? await this.bridged(
              response.result,
              { ...origin, channel: ctx.channel },
              method,
              params,
              { ...options, session: used },
              ctx.signal,
            )
          : response.result;
      return this.forClient(result, provider, ctx);
    } catch (err) {
      throw upstreamFailure(err, provider);
    }
  }

  /** An upstream's result as the client gets it, by its kind. */
  private forClient(result: McpResult, provider: ProviderRecord, ctx: McpRequestContext): McpResult {
    switch (result.resultType) {
      // MRTR: an input_required result asks only for what the client declared (methods/input-required.ts).
      case 'input_required':
        if (carriesBridgeState(result))
          throw new RpcError(
            GATEWAY_RPC.UPSTREAM_FAILED,
            "The provider's requestState uses the gateway's reserved prefix",
            502,
            { providerId: provider.id },
          );
        return honourClientCapabilities(result, ctx.clientCapabilities);
      // A task is known to the client by the gateway's id (extensions/task-ids.ts).
      case 'task':
        return this.deps.sealTask(provider, result, ctx.principal);
      default:
        return result;
    }
  }

  /** How the upstream request runs: the request's signal (the bridge's, when bridged) and deadline, notifications passed on, server requests relayed. */
  private optionsOf(
    provider: ProviderRecord,
    ctx: McpRequestContext,
    origin: RelayOrigin,
    bridge: BridgeableCall | null,
  ): UpstreamCallOptions {
    const notify = bridge ? bridge.whileAnswering(ctx.notify) : ctx.notify;
    return {
      signal: bridge?.signal ?? ctx.callerGone ?? ctx.signal,
      timeoutMs: this.deps.upstreamTimeoutMs,
      onNotification: (n: JsonRpcNotification) => {
        this.deps.noticed(provider.id, n.method);
        if (
          n.method === 'notifications/progress' ||
          n.method === 'notifications/message' ||
          n.method === 'notifications/resources/updated'
        )
          notify?.(n);
      },
      session: undefined,
      onStreamPaused: ctx.onUpstreamPaused,
      clientCapabilities: ctx.clientCapabilities,
      // Called only when the upstream sends a request: nothing is awaited for it on a plain call.
      onRequest: (request, session) => this.deps.relay.relay(origin, request, session),
    };
  }

  /** The legacy session's upstream session for the provider, opened and remembered on first use; none without a session. */
  private async upstreamSession(
    provider: ProviderRecord,
    ctx: McpRequestContext,
    target: UpstreamTarget,
    options: UpstreamCallOptions,
  ): Promise<UpstreamSession | undefined> {
    if (!ctx.session) return undefined;
    const known = ctx.session.upstreams[provider.id];
    if (known) return known;
    const opened = await this.deps.client.open(target, options);
    await this.rememberUpstream(ctx, provider.id, opened);
    return opened;
  }

  /**
   * A forwarded request's target: a tools/call's with the headers its call read (`paramHeaders`:
   * the tool's `Mcp-Param-*`, which a 2026-07-28 server checks against the body, and the user's
   * own auth), anything else with the caller's own auth for a per-user provider (RequestTargets).
   */
  private async targetOf(
    provider: ProviderRecord,
    ctx: McpRequestContext,
    call: ForwardedCall | null,
  ): Promise<UpstreamTarget> {
    if (call === null) return this.deps.targets.forRequest(provider, targetRequestOf(ctx));
    // The call refused a user without their auth already; a per-user provider is never called without it.
    if (lacksUserAuth(provider, carriesUserAuth(call.paramHeaders)))
      throw new RpcError(GATEWAY_RPC.DENIED, NO_USER_AUTH, 403, {
        decision: 'denied',
        reason: NO_USER_AUTH,
        providerId: provider.id,
        auditId: call.auditId,
      });
    const identified = this.deps.targets.identified(provider, targetRequestOf(ctx));
    return call.paramHeaders ? { ...identified, headers: { ...identified.headers, ...call.paramHeaders } } : identified;
  }

  /** An input_required result bridged for a legacy client: each retry is the same request with the client's answers, on the same upstream session. */
  private bridged(
    first: McpResult,
    origin: RelayOrigin & { channel: ClientChannel },
    method: string,
    params: McpResult,
    options: UpstreamCallOptions,
    signal: AbortSignal,
  ): Promise<McpResult> {
    return bridgeInputRequired(this.deps.relay, { origin, signal }, first, async (answers) => {
      const { response, status } = await this.deps.client.request(
        origin.target,
        method,
        upstreamParams({ ...params, ...answers }),
        options,
      );
      if ('error' in response) throw new UpstreamAnswer(response, status);
      return response.result;
    });
  }

  private async rememberUpstream(ctx: McpRequestContext, providerId: string, session: UpstreamSession): Promise<void> {
    if (!ctx.session) return;
    ctx.session.upstreams[providerId] = session;
    await this.deps.sessions.setUpstream(ctx.session.claims.sid, providerId, session);
  }
}

/** Who a forwarded request is for and what their auth is read from: the request's caller, revision, headers and capabilities. */
export const targetRequestOf = (ctx: McpRequestContext): TargetRequest => ({
  principal: ctx.principal,
  requestId: ctx.requestId,
  clientVersion: ctx.protocolVersion,
  headers: ctx.headers,
  capabilities: ctx.clientCapabilities,
});

const NO_USER_AUTH = "This provider answers as the user: the call carries none of the user's auth";

/** An upstream client's failure as the gateway answers it; anything else (an upstream's own answer, a refusal) as it is. */
function upstreamFailure(err: unknown, provider: ProviderRecord): unknown {
  if (!isMcpUpstreamError(err)) return err;
  if (err.kind === 'aborted') return new ClientGone();
  if (err.kind === 'timeout')
    return new RpcError(GATEWAY_RPC.UPSTREAM_TIMEOUT, 'The provider did not answer in time', 504, {
      providerId: provider.id,
    });
  const refused = egressRefusalOf(err);
  if (refused) return egressRefused(refused, provider.id);
  return new RpcError(GATEWAY_RPC.UPSTREAM_FAILED, 'The provider could not be reached', 502, {
    providerId: provider.id,
    reason: err.message,
  });
}

/** A forwarded request's failure as a bridged call's end keeps it (the client's retry is answered with it on any replica). */
function failureOf(err: unknown): BridgeFailure {
  if (err instanceof UpstreamAnswer) return { error: err.response.error, status: err.status };
  if (err instanceof RpcError) return { error: err.toObject(), status: err.status };
  return { error: { code: JSON_RPC.INTERNAL_ERROR, message: 'Internal error' }, status: 500 };
}

/** An upstream's JSON-RPC error, passed on to the client unchanged. */
export class UpstreamAnswer extends Error {
  constructor(
    readonly response: Extract<JsonRpcResponse, { error: unknown }>,
    /** The upstream's HTTP status: a 4xx stays a 4xx (2026-07-28 gives 400 and 404 a meaning), anything else is 200. */
    readonly upstreamStatus: number,
  ) {
    super(response.error.message);
  }

  get status(): number {
    return this.upstreamStatus >= 400 && this.upstreamStatus < 500 ? this.upstreamStatus : 200;
  }
}
