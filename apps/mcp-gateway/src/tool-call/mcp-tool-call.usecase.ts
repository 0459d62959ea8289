import type { ProviderRecord } from '@agentgw/catalog';
import { matchGlob, newId, toolNameProblem, type Clock, type RiskLevel } from '@agentgw/core';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import { toolParamHeaders } from '../methods/param-headers.js';
import type { CallerProviders } from '../provider-view/caller-providers.js';
import { ClientGone, egressRefused, GATEWAY_RPC, invalidParams, RpcError } from '../rpc-errors.js';
import { listedTools } from '../tool-names/offered-tools.js';
import { nameScope, type ToolNaming } from '../tool-names/tool-naming.js';
import { QUARANTINE_REASONS, type ToolPins } from '../tool-pins/tool-pins.js';
import { refusalError } from '../upstream-auth/caller-auth.js';
import { withUserAuth } from '../upstream-auth/user-auth-refusal.js';
import { UpstreamAnswer, type ForwardedCall } from '../upstream-forwarding.js';
import type { HeldCallResult, ToolCallCommand, ToolCallTarget } from './tool-call.command.js';
import type { HoldCallOptions, ToolCallUseCase } from './tool-call.usecase.js';

/** What a tools/call runs through: the decision and its records, the caller's view of providers, exposed names, pins, forwarding and the clock. */
export interface McpToolCallDeps {
  calls: ToolCallUseCase;
  view: CallerProviders;
  names: ToolNaming;
  pins: ToolPins;
  clock: Clock;
  /** Sends the call upstream as the caller (upstream-forwarding.ts). */
  forward(provider: ProviderRecord, params: McpResult, ctx: McpRequestContext, call: ForwardedCall): Promise<McpResult>;
}

/** Records a call refused for its user's auth: before it was opened (`refused`), or after its hold released it. */
type RefusalRecorder = (call: ToolCallCommand, providerId: string, reason: string) => Promise<void>;

/**
 * The whole MCP `tools/call`, in the order it happens: exposed name → decide → listed →
 * quarantine → the user's auth → record → hold → re-check → forward → outcome. Refusals are
 * answered as the JSON-RPC errors they always were (and recorded first); the decision, hold and
 * records are the tool gate's too (`ToolCallUseCase`).
 */
export class McpToolCall {
  constructor(private readonly deps: McpToolCallDeps) {}

  /**
   * tools/call on the unified endpoint: the exposed name resolves to (provider, upstream name)
   * among the caller's providers, then the call goes on under the upstream name, as on the proxy.
   */
  async callExposed(
    params: McpResult,
    ctx: McpRequestContext,
    alwaysConfirm: boolean,
    providerFilter: readonly string[] | null,
  ): Promise<McpResult> {
    const { view, names } = this.deps;
    const name = toolNameParam(params);
    const offeredOf = async (provider: ProviderRecord) =>
      listedTools(provider, await view.list(provider, ctx, 'tools', ctx.clientCapabilities));
    const routing = await view.routingSet(ctx.principal, providerFilter);
    const resolved = await names.resolveExposedName(nameScope(ctx.principal), routing, name, offeredOf);
    if (resolved !== null)
      return this.call({ ...params, name: resolved.upstreamName }, ctx, alwaysConfirm, {
        kind: 'routed',
        providerFilter,
        provider: resolved.provider,
      });
    // A name a provider the caller has not connected would claim goes to it: refused there with the connect URL (audited), not "unknown".
    for (const provider of routing)
      if (matchGlob(provider.pattern, name) && (await view.mustConnect(provider, ctx)))
        return this.call({ ...params, name }, ctx, alwaysConfirm, { kind: 'routed', providerFilter, provider });
    throw invalidParams(`Unknown tool: ${name}`);
  }

  /** tools/call of an upstream name at its target, from the decision to the recorded outcome. */
  async call(
    params: McpResult,
    ctx: McpRequestContext,
    alwaysConfirm: boolean,
    target: ToolCallTarget,
  ): Promise<McpResult> {
    const { calls } = this.deps;
    const call = commandOf(params, ctx, alwaysConfirm, target);
    const decision = await calls.decide(call);
    if (decision.kind === 'denied') throw denied(decision.reason, decision.risk, decision.auditId);
    await this.assertListed(call, decision.provider, ctx);
    await this.assertNotQuarantined(call, decision.provider, ctx.clientCapabilities);
    let paramHeaders = await this.callHeaders(call, decision.provider, ctx, (c, p, r) => calls.record.refused(c, p, r));
    // Enqueued beside the call, awaited before the answer: an acknowledged call is always audited.
    // Unless held, its outcome follows in moments: the create waits for it, one record per call.
    const opened = calls.open(call, decision, decision.hold ? 'now' : 'with-outcome');
    let provider = decision.provider;
    let forwardCtx = ctx;
    if (decision.hold) {
      const released = await calls.hold(call, decision, holdOptions(ctx));
      if (released.kind !== 'confirmed') {
        if (released.kind === 'gone') throw new ClientGone();
        await opened;
        throw refusal(released);
      }
      provider = released.provider;
      // The signal was read by the hold already, so copying the context creates nothing new.
      forwardCtx = { ...ctx, principal: released.principal };
      // A user's token read before a long hold may have expired (or been revoked) meanwhile: read it again.
      paramHeaders = await this.callHeaders(
        { ...call, principal: released.principal },
        provider,
        forwardCtx,
        async (c, _p, reason) => {
          await opened;
          await calls.record.refusedAfterRelease(c.auditId, reason);
        },
      );
    }
    return this.forwardAndRecord(
      provider,
      params,
      forwardCtx,
      { auditId: decision.auditId, toolName: call.toolName, paramHeaders },
      opened,
    );
  }

  /** Forwards the released call and records its outcome (completed, or failed with the upstream's error). */
  private async forwardAndRecord(
    provider: ProviderRecord,
    params: McpResult,
    ctx: McpRequestContext,
    call: ForwardedCall,
    opened: Promise<void>,
  ): Promise<McpResult> {
    const { calls, clock } = this.deps;
    const { auditId } = call;
    const started = clock.now().getTime();
    try {
      const result = await this.deps.forward(provider, params, ctx, call);
      const status = result.isError === true ? 'failed' : 'completed';
      await Promise.all([
        opened,
        calls.record.finished(auditId, { status, result, duration: clock.now().getTime() - started }),
      ]);
      return result;
    } catch (err) {
      const error =
        err instanceof UpstreamAnswer && 'error' in err.response
          ? err.response.error.message
          : err instanceof Error
            ? err.message
            : 'failed';
      await Promise.all([
        opened,
        calls.record.finished(auditId, { status: 'failed', error, duration: clock.now().getTime() - started }),
      ]);
      throw err;
    }
  }

  /**
   * Only a name the provider listed goes out: a variant of a denied name (case, look-alike) that
   * no rule matched never reaches an upstream that matches names loosely. Answered from the
   * cached list (the caller's own for a per-user provider); a provider whose list cannot be had
   * is not called unchecked (502), and a caller with no credential for a per-user one is refused
   * as its call would be (CREDENTIALS_REQUIRED with the connect URL, audited).
   */
  private async assertListed(
    call: ToolCallCommand,
    provider: ProviderRecord,
    ctx: McpRequestContext,
    retried = false,
  ): Promise<void> {
    const { view, calls } = this.deps;
    const name = call.toolName;
    const listing = await view.listed(provider, { ...ctx, principal: call.principal }, name);
    if (listing.kind === 'listed') return;
    if (listing.kind === 'unlisted') throw invalidParams(`Unknown tool: ${name}`);
    if (listing.kind === 'needs_auth') {
      await this.userAuthOrRefuse(call, provider, ctx, (c, p, r) => calls.record.refused(c, p, r));
      // Not refused: the user connected within the cached answer's seconds, so their list is asked for now.
      if (!retried && view.forgetCallerLists(provider, call.principal))
        return this.assertListed(call, provider, ctx, true);
      throw listUnavailable(provider, listing.needsAuth.reason);
    }
    if (listing.refusal) throw egressRefused(listing.refusal, provider.id);
    throw listUnavailable(provider, listing.failure);
  }

  /** A tool whose definition is quarantined (pinning) is not called: refused before it is forwarded, audited as rejected with the reason. */
  private async assertNotQuarantined(
    call: ToolCallCommand,
    provider: ProviderRecord,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    const cached = this.deps.view.cachedTools(provider, call.principal, capabilities);
    const status = await this.deps.pins.quarantineOf(provider, cached, call.toolName);
    if (status === null) return;
    const reason = QUARANTINE_REASONS[status];
    await this.deps.calls.record.refused(call, provider.id, reason);
    throw new RpcError(GATEWAY_RPC.DENIED, reason, 403, {
      decision: 'denied',
      reason,
      code: 'TOOL_QUARANTINED',
      status,
      providerId: provider.id,
      auditId: call.auditId,
    });
  }

  /**
   * The headers a call carries upstream: the tool's `Mcp-Param-*` and, for a provider that is called
   * as the user, that user's own auth (a stored token, refreshed when near expiry, or an exchanged
   * one). A user without it is refused with the connect URL, recorded through `refused`.
   */
  private async callHeaders(
    call: ToolCallCommand,
    provider: ProviderRecord,
    ctx: McpRequestContext,
    refused: RefusalRecorder,
  ): Promise<Record<string, string> | null> {
    const userAuth = await this.userAuthOrRefuse(call, provider, ctx, refused);
    const cached = this.deps.view.cachedTools(provider, call.principal, ctx.clientCapabilities);
    return withUserAuth(toolParamHeaders(cached, call.toolName, call.arguments, ctx), userAuth);
  }

  /**
   * The caller's own auth a call carries (null: none of theirs), or its refusal, recorded through
   * `refused`: CREDENTIALS_REQUIRED with the connect URL (as a URL elicitation when the client
   * declared it), USER_REQUIRED, SIGN_IN_TOKEN_REQUIRED or TOKEN_EXCHANGE_REFUSED.
   */
  private async userAuthOrRefuse(
    call: ToolCallCommand,
    provider: ProviderRecord,
    ctx: McpRequestContext,
    refused: RefusalRecorder,
  ): Promise<Record<string, string> | null> {
    const auth = await this.deps.view.auth(provider, { principal: call.principal, headers: ctx.headers });
    if (auth.kind === 'headers') return auth.headers;
    // Settings that name no source of the user's auth: the call goes on without it and is refused before it is sent (forwarding).
    if (auth.kind === 'none' || auth.refusal.kind === 'unconfigured') return null;
    const { reason, error } = refusalError(auth.refusal, provider, ctx.clientCapabilities, call.auditId);
    await refused(call, provider.id, reason);
    throw error;
  }
}

/** The command of a tools/call request: its name and arguments checked (-32602 when unusable), a fresh audit id. */
function commandOf(
  params: McpResult,
  ctx: McpRequestContext,
  alwaysConfirm: boolean,
  target: ToolCallTarget,
): ToolCallCommand {
  const name = toolNameParam(params);
  const args = params.arguments ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw invalidParams('params.arguments must be an object');
  return {
    principal: ctx.principal,
    toolName: name,
    arguments: args as Record<string, unknown>,
    target,
    alwaysConfirm,
    auditId: newId(),
  };
}

/** A held call waits with the request's signal, reporting its status on the response stream (when there is one). */
function holdOptions(ctx: McpRequestContext): HoldCallOptions {
  const { progressToken, notify } = ctx;
  return {
    signal: ctx.signal,
    confirmationToken: ctx.confirmationToken,
    reauthenticate: ctx.reauthenticate,
    onStatus: ({ confirmationId, message, elapsedMs }) => {
      if (!notify) return;
      if (progressToken !== null)
        notify({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken, progress: elapsedMs, message },
        });
      notify({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'info', logger: 'agentgw/confirmation', data: { confirmationId, message, elapsedMs } },
      });
    },
  };
}

/** tools/call's `params.name`, refused (-32602) when missing or one no rule could decide (`toolNameProblem`). */
export const toolNameParam = (params: McpResult): string => {
  const name = params.name;
  if (typeof name !== 'string') throw invalidParams('params.name must be a non-empty string');
  const problem = toolNameProblem(name);
  if (problem !== null) throw invalidParams(`params.name ${problem}`);
  return name;
};

/** A denial's error (403 -32003), with the audit id of the record that names it. */
export const denied = (reason: string, risk: RiskLevel, auditId?: string): RpcError =>
  new RpcError(GATEWAY_RPC.DENIED, reason, 403, { decision: 'denied', reason, risk, ...(auditId ? { auditId } : {}) });

/** A held call that is not released: refused by the re-check (as a denial) or by the confirmation (rejected, timed out). */
const refusal = (held: Exclude<HeldCallResult, { kind: 'confirmed' | 'gone' }>): RpcError =>
  held.kind === 'denied'
    ? denied(held.reason, held.risk, held.auditId)
    : new RpcError(GATEWAY_RPC.CONFIRMATION_REJECTED, held.reason, 403, {
        decision: held.kind,
        reason: held.reason,
        confirmationId: held.confirmationId,
        auditId: held.auditId,
      });

/** A provider whose tool list cannot be had is not called unchecked. */
const listUnavailable = (provider: ProviderRecord, reason: string) =>
  new RpcError(GATEWAY_RPC.UPSTREAM_FAILED, 'The provider did not list its tools, so the call cannot be checked', 502, {
    providerId: provider.id,
    reason,
  });
