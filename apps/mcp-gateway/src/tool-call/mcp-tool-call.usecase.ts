import type { ProviderRecord } from '@agentgw/catalog';
import { matchGlob, newTimeOrderedId } from '@agentgw/core';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import type { CallerProviders } from '../provider-view/caller-providers.js';
import { ClientGone, invalidParams } from '../rpc-errors.js';
import { listedTools } from '../tool-names/offered-tools.js';
import { nameScope, type ToolNaming } from '../tool-names/tool-naming.js';
import type { ToolPins } from '../tool-pins/tool-pins.js';
import { CallChecks } from './call-checks.js';
import type { ClientCarrier } from './client-carrier.js';
import { forwardAndRecord, type ForwardedCallDeps } from './forwarded-call.js';
import type { HeldCallRounds } from './held-call-round.js';
import type { ConfirmedTask, HeldCallTasks, HeldTaskRunner } from './held-call-task.js';
import { holdOptions } from './held-call-status.js';
import type { AllowedCall, HeldCallResult, ToolCallCommand, ToolCallTarget } from './tool-call.command.js';
import { denied, refusal, toolNameParam } from './tool-call-errors.js';
import { NOT_THIS_PROVIDER } from './released-call-check.js';
import type { ToolCallUseCase } from './tool-call.usecase.js';

/** What a tools/call runs through: the decision and its records, the caller's view of providers, exposed names, pins, forwarding, the clock, and the carriers that ask in the caller's client: on its stream, or by a 2026-07-28 input_required round, or a task for a client that declared the tasks extension (null: none). */
export interface McpToolCallDeps extends ForwardedCallDeps {
  calls: ToolCallUseCase;
  view: CallerProviders;
  names: ToolNaming;
  pins: ToolPins;
  carrier: ClientCarrier | null;
  rounds: HeldCallRounds | null;
  tasks: HeldCallTasks | null;
}

/**
 * The whole MCP `tools/call`, in the order it happens: exposed name → decide → listed →
 * quarantine → the user's auth → record → hold (asking in the caller's client too, when the rule
 * lets it) → re-check → forward → outcome. Refusals are answered as the JSON-RPC errors they
 * always were (and recorded first); the decision, hold and records are the tool gate's too
 * (`ToolCallUseCase`); the checks are call-checks.ts, the forwarding forwarded-call.ts.
 */
export class McpToolCall implements HeldTaskRunner {
  private readonly checks: CallChecks;

  constructor(private readonly deps: McpToolCallDeps) {
    this.checks = new CallChecks(deps);
  }

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
    const { calls, carrier, rounds, tasks } = this.deps;
    // ── 2026-07-28 held-call rounds (held-call-round.ts): a retry answering one of the gateway's rounds ──
    const roundState = rounds?.retryOf(params) ?? null;
    if (rounds !== null && roundState !== null)
      return this.resumeRound(rounds, params, ctx, alwaysConfirm, target, roundState);
    // ── end of held-call rounds ──
    const { checks } = this;
    const call = commandOf(params, ctx, alwaysConfirm, target);
    const decision = await calls.decide(call);
    if (decision.kind === 'denied') throw denied(decision.reason, decision.risk, decision.auditId);
    await checks.assertListed(call, decision.provider, ctx);
    await checks.assertNotQuarantined(call, decision.provider, ctx.clientCapabilities);
    const paramHeaders = await checks.callHeaders(call, decision.provider, ctx, (c, p, r) =>
      calls.record.refused(c, p, r),
    );
    // Enqueued beside the call, awaited before the answer: an acknowledged call is always audited.
    // Unless held, its outcome follows in moments: the create waits for it, one record per call.
    const opened = calls.open(call, decision, decision.hold ? 'now' : 'with-outcome');
    if (decision.hold) {
      // ── a client that declared the tasks extension gets a task (held-call-task.ts) ──
      if (tasks !== null && tasks.accepts(ctx)) return tasks.create(call, decision, ctx, opened);
      // ── a 2026-07-28 client is asked by an input_required round instead of a held request ──
      const mode = rounds?.modeFor(ctx, decision) ?? null;
      if (rounds !== null && mode !== null) return rounds.ask(call, decision, mode, opened);
      // ── end of held-call rounds ──
      const asking = carrier?.forCall(ctx, decision) ?? null;
      const released = await calls.hold(call, decision, holdOptions(ctx, asking));
      if (released.kind === 'gone') throw new ClientGone();
      return this.forwardReleased(call, released, params, ctx, opened);
    }
    const forwarded = { auditId: decision.auditId, toolName: call.toolName, paramHeaders };
    return forwardAndRecord(this.deps, decision.provider, params, ctx, forwarded, opened);
  }

  /**
   * A released call forwarded as the principal it was released for: their token read again (one
   * read before a long hold may have expired or been revoked meanwhile), then the outcome on
   * its record. Not released: the refusal, once its record is opened.
   */
  private async forwardReleased(
    call: ToolCallCommand,
    released: Exclude<HeldCallResult, { kind: 'gone' }>,
    params: McpResult,
    ctx: McpRequestContext,
    opened: Promise<void>,
  ): Promise<McpResult> {
    const { calls } = this.deps;
    if (released.kind !== 'confirmed') {
      await opened;
      throw refusal(released);
    }
    const { provider, principal } = released;
    // The signal was read by the hold already, so copying the context creates nothing new.
    const forwardCtx = { ...ctx, principal };
    const paramHeaders = await this.checks.callHeaders(
      { ...call, principal },
      provider,
      forwardCtx,
      async (c, _p, reason) => {
        await opened;
        await calls.record.refusedAfterRelease(c.auditId, reason);
      },
    );
    const forwarded = { auditId: released.auditId, toolName: call.toolName, paramHeaders };
    return forwardAndRecord(this.deps, provider, params, forwardCtx, forwarded, opened);
  }

  /**
   * A 2026-07-28 client's retry of a held call's round (held-call-round.ts): asked again while
   * pending; released → re-checked and forwarded (without the round's `inputResponses` and
   * `requestState`, which are the gateway's) under the record the first round opened.
   */
  private async resumeRound(
    rounds: HeldCallRounds,
    params: McpResult,
    ctx: McpRequestContext,
    alwaysConfirm: boolean,
    target: ToolCallTarget,
    state: string,
  ): Promise<McpResult> {
    const settled = await rounds.settle(commandOf(params, ctx, alwaysConfirm, target), params, ctx, state);
    if (settled.kind === 'ask') return settled.result;
    const { inputResponses: _answers, requestState: _state, ...forwarded } = params;
    return this.runConfirmed(settled.call, settled.allowed, settled.confirmedBy, forwarded, ctx);
  }

  /**
   * A held-call task's confirmed call (held-call-task.ts), its approval spent by this poll: to
   * its provider among `providers` (the endpoint's reachable ones), re-checked and forwarded as
   * the polling owner under the record its tools/call opened. Its provider out of reach: refused.
   */
  async runTask(task: ConfirmedTask, ctx: McpRequestContext, providers: readonly ProviderRecord[]): Promise<McpResult> {
    const { auditId, risk, toolName, route } = task;
    const provider = providers.find((p) => p.id === task.providerId);
    if (provider === undefined) {
      await this.deps.calls.record.refusedAfterRelease(auditId, NOT_THIS_PROVIDER);
      throw denied(NOT_THIS_PROVIDER, risk, auditId);
    }
    const target: ToolCallTarget = route.kind === 'routed' ? { ...route, provider } : { kind: 'proxied', provider };
    const call = {
      principal: ctx.principal,
      toolName,
      arguments: task.arguments,
      target,
      alwaysConfirm: task.alwaysConfirm,
      auditId,
    };
    return this.runConfirmed(
      call,
      { auditId, risk, provider },
      task.confirmedBy,
      { name: toolName, arguments: task.arguments },
      ctx,
    );
  }

  /** A confirmed call (a round's retry, a task's poll) released: re-checked, then forwarded under its record. */
  private async runConfirmed(
    call: ToolCallCommand,
    allowed: Pick<AllowedCall, 'auditId' | 'risk' | 'provider'>,
    confirmedBy: string | null,
    params: McpResult,
    ctx: McpRequestContext,
  ): Promise<McpResult> {
    const released = await this.deps.calls.release(
      call,
      allowed,
      { kind: 'confirmed', confirmedBy },
      ctx.reauthenticate,
    );
    if (released.kind === 'gone') throw new ClientGone();
    return this.forwardReleased(call, released, params, ctx, Promise.resolve());
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
    auditId: newTimeOrderedId(),
  };
}
