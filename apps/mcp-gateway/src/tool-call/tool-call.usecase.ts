import type { AuditTrail, OpenTiming } from '@agentgw/audit';
import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import {
  matchGlob,
  type ConfirmationCarrier,
  type ConfirmationGate,
  type HeldCall,
  type HoldOptions,
  type HoldOutcome,
  type Logger,
  type RiskLevel,
} from '@agentgw/core';
import { addressableProvider, recheckReleasedCall, type Reauthenticate } from './released-call-check.js';
import {
  denialReason,
  mayReach,
  NO_PROVIDER_ACCESS,
  OUTSIDE_PATTERN,
  routingSet,
  toolPolicy,
  type ToolCallCatalog,
} from './tool-access.js';
import type { AllowedCall, HeldCallResult, ToolCallCommand, ToolCallDecision } from './tool-call.command.js';
import { ToolCallRecord } from './tool-call-record.js';

/** What deciding a tool call needs: the catalog's cached reads, the audit trail and the confirmation gate. */
export interface ToolCallDeps {
  catalog: ToolCallCatalog;
  audit: AuditTrail;
  gate: ConfirmationGate;
  logger: Logger;
}

/** A call to a provider named explicitly (the tool gate's). */
export type NamedCall = ToolCallCommand & { target: Exclude<ToolCallCommand['target'], { kind: 'routed' }> };

/**
 * A carrier besides the console that asks a person about one held call (their own MCP client):
 * opened once its confirmation is stored and announced; the function it returns closes the
 * question when the hold ends, however it ended.
 */
export interface HoldCarrier {
  open(confirmationId: string, held: HeldCall): () => void;
}

/** How a held call waits: the gate's options, the approval token the caller presented, how to prove the caller again, and the carrier that also asks (null: none). */
export interface HoldCallOptions extends HoldOptions {
  confirmationToken: string | null;
  reauthenticate: Reauthenticate;
  carrier: HoldCarrier | null;
}

/** Where a rule that names no carriers lets its confirmations be answered: the console and push, never the caller's client. */
export const DEFAULT_CARRIERS: readonly ConfirmationCarrier[] = Object.freeze(['console', 'push']);

/**
 * "Decide a tool call", the one use case behind the unified MCP endpoint, the MCP proxy and the
 * tool gate: `decide` (route, pattern, provider access, policy as the end user), `open` (the
 * pending record), `hold` (hold or redeem a token, then re-check what holds now). Callers
 * check the kill switch first (`agentStanding`) and forward an allowed or confirmed call
 * themselves; every record write goes through `record` (tool-call-record.ts).
 */
export class ToolCallUseCase {
  readonly record: ToolCallRecord;

  constructor(private readonly deps: ToolCallDeps) {
    this.record = new ToolCallRecord(deps);
  }

  /** Steps 2–4 of the spec's tools/call (the caller found the provider): a refusal is recorded (one rejected record) before it is answered. */
  async decide(call: ToolCallCommand): Promise<ToolCallDecision> {
    const { catalog } = this.deps;
    const { principal, target, toolName } = call;
    const { provider } = target;
    // A provider owns only what its pattern matches (a routed name was resolved so already).
    if (!matchGlob(provider.pattern, toolName))
      return this.refuse(call, provider.id, OUTSIDE_PATTERN, OUTSIDE_PATTERN, 'high');
    if (target.kind !== 'proxied' && !(await mayReach(catalog, principal, provider.id))) {
      return this.refuse(call, provider.id, 'no provider access', NO_PROVIDER_ACCESS, 'high');
    }
    const policy = await toolPolicy(catalog, principal, provider.id, toolName);
    if (policy.action === 'deny') {
      const reason = denialReason(policy);
      return this.refuse(call, provider.id, reason, reason, policy.risk);
    }
    return {
      kind: 'allowed',
      auditId: call.auditId,
      risk: policy.risk,
      provider,
      hold: call.alwaysConfirm || policy.action === 'require_confirmation',
      carriers: policy.matchedRule?.confirmCarriers ?? DEFAULT_CARRIERS,
    };
  }

  /** Opens the record of an allowed call as pending; the caller awaits it before it answers, not before it forwards. */
  open(call: ToolCallCommand, allowed: AllowedCall, timing: OpenTiming = 'now'): Promise<void> {
    return this.record.opened(call, allowed.provider.id, timing);
  }

  /**
   * Holds an allowed call until a human decides (or spends the exact-call token it carries),
   * then re-checks it against what holds now. The confirmation's outcome is recorded by the
   * confirmation state machine, not here (see ToolCallRecord).
   */
  async hold(call: ToolCallCommand, allowed: AllowedCall, options: HoldCallOptions): Promise<HeldCallResult> {
    const { auditId, risk } = allowed;
    const held = heldCallOf(call, allowed);
    const redeemed =
      options.confirmationToken !== null && (await this.deps.gate.redeem(options.confirmationToken, held));
    if (redeemed) return this.release(call, allowed, { kind: 'redeemed' }, options.reauthenticate);
    const outcome = await this.holdAsking(held, options);
    if (outcome.decision === 'expired') return GONE;
    if (outcome.decision !== 'confirmed')
      return { kind: outcome.decision, auditId, risk, reason: outcome.reason, confirmationId: outcome.confirmationId };
    return this.release(call, allowed, { kind: 'confirmed', confirmedBy: outcome.confirmedBy }, options.reauthenticate);
  }

  /**
   * A confirmed call (by a person, `confirmedBy`, or its exact-call token redeemed) re-checked
   * against what holds now: the hold's end, and a 2026-07-28 round's retry (held-call-round.ts).
   */
  async release(
    call: ToolCallCommand,
    allowed: Pick<AllowedCall, 'auditId' | 'risk' | 'provider'>,
    how: { kind: 'confirmed'; confirmedBy: string | null } | { kind: 'redeemed' },
    reauthenticate: Reauthenticate,
  ): Promise<HeldCallResult> {
    const { principal, toolName } = call;
    const { auditId, risk, provider } = allowed;
    const release = await recheckReleasedCall(this.deps.catalog, {
      principal,
      reauthenticate,
      providerId: provider.id,
      toolName,
      locate: (fresh) => this.locate(call, fresh),
    });
    if (!release.ok) {
      await this.record.refusedAfterRelease(auditId, release.reason);
      return { kind: 'denied', auditId, risk, reason: release.reason };
    }
    if (how.kind === 'redeemed') await this.record.redeemed(auditId);
    const confirmedBy = how.kind === 'confirmed' ? how.confirmedBy : null;
    return { kind: 'confirmed', auditId, risk, confirmedBy, principal: release.principal, provider: release.provider };
  }

  /** The gate's hold, with the carrier's question opened at its first status (the confirmation exists then) and closed when it ends. */
  private async holdAsking(held: HeldCall, options: HoldCallOptions): Promise<HoldOutcome> {
    const { carrier, onStatus, signal } = options;
    if (carrier === null) return this.deps.gate.hold(held, { signal, onStatus });
    let close: (() => void) | null = null;
    try {
      return await this.deps.gate.hold(held, {
        signal,
        onStatus: (status) => {
          close ??= carrier.open(status.confirmationId, held);
          onStatus?.(status);
        },
      });
    } finally {
      (close as (() => void) | null)?.();
    }
  }

  /** The call's provider as `principal` may reach it now: by id when named, else in its routing set (an exposed name never moves to another provider). */
  private async locate(call: ToolCallCommand, principal: Principal): Promise<ProviderRecord | null> {
    const { catalog } = this.deps;
    const { target } = call;
    if (target.kind !== 'routed') return addressableProvider(catalog, principal, target.provider.id);
    return (
      (await routingSet(catalog, principal, target.providerFilter)).find((p) => p.id === target.provider.id) ?? null
    );
  }

  private async refuse(
    call: ToolCallCommand,
    providerId: string,
    error: string,
    reason: string,
    risk: RiskLevel,
  ): Promise<ToolCallDecision> {
    await this.record.refused(call, providerId, error);
    return { kind: 'denied', auditId: call.auditId, risk, reason };
  }
}

/** What the confirmation hub is told of a held call: who makes it (the call's principal), what, where, at which risk, under which record. */
export function heldCallOf(
  call: Pick<ToolCallCommand, 'principal' | 'toolName' | 'arguments'>,
  allowed: Pick<AllowedCall, 'auditId' | 'risk'> & { provider: Pick<ProviderRecord, 'id'> },
): HeldCall {
  const { principal } = call;
  return {
    auditId: allowed.auditId,
    agentId: principal.agentId,
    userId: principal.userId,
    endUserId: principal.endUserId,
    tenantId: principal.tenantId,
    providerId: allowed.provider.id,
    toolName: call.toolName,
    arguments: call.arguments,
    risk: allowed.risk,
  };
}

const GONE: HeldCallResult = Object.freeze({ kind: 'gone' });
