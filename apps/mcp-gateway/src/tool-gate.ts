import type { Principal } from '@agentgw/auth';
import type { AuditTrail } from '@agentgw/audit';
import type { Catalog } from '@agentgw/catalog';
import { NotFoundError, type ConfirmationGate, type Logger, type RiskLevel } from '@agentgw/core';
import type { AuditIdSigner } from './audit-ids.js';
import type { Reauthenticate } from './tool-call/released-call-check.js';
import { agentStanding } from './tool-call/tool-access.js';
import { QUARANTINE_REASONS, type ToolPins } from './tool-pins/tool-pins.js';
import type { HeldCallResult, ToolCallDecision } from './tool-call/tool-call.command.js';
import { ToolCallUseCase, type NamedCall } from './tool-call/tool-call.usecase.js';

/** The tool gate's answer: the spec's five decisions, always with the audit id. */
export type GateAnswer =
  | { auditId: string; decision: 'allow'; risk: RiskLevel }
  | { auditId: string; decision: 'denied'; risk: RiskLevel; reason: string }
  | { auditId: string; decision: 'confirmed'; risk: RiskLevel; confirmedBy: string | null }
  | { auditId: string; decision: 'rejected'; risk: RiskLevel; reason: string }
  | { auditId: string; decision: 'timeout'; risk: RiskLevel; reason: string };

/** The catalog for the decision, the trail for the record, the gate for holds. */
export interface ToolGateDeps {
  catalog: Catalog;
  audit: AuditTrail;
  gate: ConfirmationGate;
  logger: Logger;
  /** Audit ids bound to their owner, so only the caller that evaluated may complete the record. */
  auditIds: AuditIdSigner;
  /** Pinned definitions: a tool the gateway holds quarantined is denied here too. */
  pins: ToolPins;
}

/**
 * The tool gate for runtimes that call tools themselves: the same use case as an MCP tools/call
 * (kill switch, provider access, policy as the end user, confirmation hold, the same record),
 * translated into the gate's answer; the runtime completes the record afterwards.
 */
export class ToolGate {
  private readonly calls: ToolCallUseCase;

  constructor(private readonly deps: ToolGateDeps) {
    this.calls = new ToolCallUseCase(deps);
  }

  /** Decides a call; null when the caller went away while it was held. */
  async evaluate(
    principal: Principal,
    input: { toolName: string; providerId: string; params: Record<string, unknown> },
    options: { signal: AbortSignal; confirmationToken: string | null; reauthenticate: Reauthenticate },
  ): Promise<GateAnswer | null> {
    const { catalog } = this.deps;
    const { alwaysConfirm } = await agentStanding(catalog, principal);
    const provider = await catalog.providers.getFor(principal, input.providerId);
    const call: NamedCall = {
      principal,
      toolName: input.toolName,
      arguments: input.params,
      target: { kind: 'named', provider },
      alwaysConfirm,
      auditId: this.deps.auditIds.issue(principal),
    };
    const decision = await this.calls.decide(call);
    if (decision.kind === 'denied') return answerOf(decision);
    // The runtime lists and calls upstream itself, so only a quarantine the gateway already recorded is known here.
    const quarantined = await this.deps.pins.recordedQuarantine(provider.id, input.toolName);
    if (quarantined !== null) {
      const reason = QUARANTINE_REASONS[quarantined];
      await this.calls.record.refused(call, provider.id, reason);
      return { auditId: call.auditId, decision: 'denied', risk: decision.risk, reason };
    }
    await this.calls.open(call, decision);
    if (!decision.hold) return { auditId: decision.auditId, decision: 'allow', risk: decision.risk };
    return answerOf(
      await this.calls.hold(call, decision, {
        signal: options.signal,
        confirmationToken: options.confirmationToken,
        reauthenticate: options.reauthenticate,
        // An agent runtime's gate: its call is never asked in a client (the console and push decide).
        carrier: null,
      }),
    );
  }

  /**
   * Completes the record of an evaluated call (only its owner may: anyone else's id, a forged or
   * an altered one is a 404 that tells nothing), or creates one for a call that was never evaluated.
   */
  async audit(
    principal: Principal,
    input: {
      auditId?: string;
      toolName?: string;
      providerId?: string;
      result?: unknown;
      durationMs?: number;
      status?: 'completed' | 'failed';
      error?: string;
    },
  ): Promise<string> {
    const outcome = {
      status: input.status ?? 'completed',
      result: input.result,
      duration: input.durationMs ?? null,
      error: input.error,
    };
    if (input.auditId !== undefined) {
      if (!this.deps.auditIds.ownedBy(input.auditId, principal)) throw new NotFoundError('Audit record');
      await this.calls.record.reported(input.auditId, outcome);
      return input.auditId;
    }
    const provider = await this.deps.catalog.providers.getFor(principal, input.providerId!);
    const auditId = this.deps.auditIds.issue(principal);
    await this.calls.record.reportedUnevaluated(
      { principal, auditId, toolName: input.toolName!, arguments: null },
      provider.id,
      outcome,
    );
    return auditId;
  }
}

/** The use case's result in the gate's words; null when nobody is left to answer. */
function answerOf(result: Exclude<ToolCallDecision, { kind: 'allowed' }> | HeldCallResult): GateAnswer | null {
  switch (result.kind) {
    case 'denied':
      return { auditId: result.auditId, decision: 'denied', risk: result.risk, reason: result.reason };
    case 'confirmed':
      return { auditId: result.auditId, decision: 'confirmed', risk: result.risk, confirmedBy: result.confirmedBy };
    case 'rejected':
    case 'timeout':
      return { auditId: result.auditId, decision: result.kind, risk: result.risk, reason: result.reason };
    case 'gone':
      return null;
  }
}
