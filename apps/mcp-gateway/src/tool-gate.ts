import { tenantScope, type Principal } from '@agentgw/auth';
import type { AuditOpenEntry, AuditTrail } from '@agentgw/audit';
import type { Catalog } from '@agentgw/catalog';
import type { AuditIdSigner } from './audit-ids.js';
import { OUTSIDE_PATTERN } from './mcp-pipeline.js';
import { addressableProvider, recheckReleasedCall, type Reauthenticate } from './released-call-check.js';
import { ForbiddenError, matchGlob, NotFoundError, type AuditStatus, type ConfirmationGate, type Logger, type RiskLevel } from '@agentgw/core';

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
}

/**
 * The tool gate for runtimes that call tools themselves: the same decision as an MCP tools/call
 * (kill switch, provider access, policy as the end user, confirmation hold) and the same audit
 * record, which the runtime completes afterwards.
 */
export class ToolGate {
  constructor(private readonly deps: ToolGateDeps) {}

  /** Decides a call; null when the caller went away while it was held. */
  async evaluate(
    principal: Principal,
    input: { toolName: string; providerId: string; params: Record<string, unknown> },
    options: { signal: AbortSignal; confirmationToken: string | null; reauthenticate: Reauthenticate },
  ): Promise<GateAnswer | null> {
    const { catalog } = this.deps;
    let requireConfirmation = false;
    if (principal.agentId !== null) {
      const agent = await catalog.agents.get(principal.agentId);
      if (!agent || !agent.isActive) throw new ForbiddenError('Agent is disabled', 'AGENT_DISABLED');
      requireConfirmation = agent.requireConfirmation;
    }
    const provider = await catalog.providers.getFor(principal, input.providerId);
    const auditId = this.deps.auditIds.issue(principal);
    const entry = {
      id: auditId,
      userId: principal.userId,
      agentId: principal.agentId,
      endUserId: principal.endUserId,
      providerId: provider.id,
      tenantId: principal.tenantId,
      toolName: input.toolName,
      arguments: input.params,
    };
    // The same question the MCP endpoints answer: the provider owns only what its pattern matches.
    if (!matchGlob(provider.pattern, input.toolName)) {
      await this.record(entry, 'rejected', { error: OUTSIDE_PATTERN });
      return { auditId, decision: 'denied', risk: 'high', reason: OUTSIDE_PATTERN };
    }
    const reachable =
      principal.agentId === null ||
      (await catalog.rules.providerAllowed({ agentId: principal.agentId, tenantId: tenantScope(principal), providerId: provider.id }));
    if (!reachable) {
      await this.record(entry, 'rejected', { error: 'no provider access' });
      return { auditId, decision: 'denied', risk: 'high', reason: 'The agent has no access to this provider' };
    }
    const decision = await catalog.rules.decide({
      agentId: principal.agentId,
      userId: principal.endUserId ?? principal.userId,
      tenantId: tenantScope(principal),
      providerId: provider.id,
      toolName: input.toolName,
    });
    if (decision.action === 'deny') {
      const reason = decision.matchedRule ? 'Denied by an access rule' : 'No access rule allows this tool';
      await this.record(entry, 'rejected', { error: reason });
      return { auditId, decision: 'denied', risk: decision.risk, reason };
    }
    if (decision.action === 'allow' && !requireConfirmation) {
      await this.record(entry, 'pending');
      return { auditId, decision: 'allow', risk: decision.risk };
    }
    await this.record(entry, 'pending');
    const held = {
      auditId,
      agentId: principal.agentId,
      userId: principal.userId,
      endUserId: principal.endUserId,
      tenantId: principal.tenantId,
      providerId: provider.id,
      toolName: input.toolName,
      arguments: input.params,
      risk: decision.risk,
    };
    const redeemed = options.confirmationToken !== null && (await this.deps.gate.redeem(options.confirmationToken, held));
    const outcome = redeemed ? ({ decision: 'confirmed', confirmedBy: null } as const) : await this.deps.gate.hold(held, { signal: options.signal });
    switch (outcome.decision) {
      case 'confirmed': {
        // Released: the kill switch and the policy again, as they stand now.
        const release = await recheckReleasedCall(catalog, {
          principal,
          reauthenticate: options.reauthenticate,
          providerId: provider.id,
          toolName: input.toolName,
          locate: (fresh) => addressableProvider(catalog, fresh, provider.id),
        });
        if (!release.ok) {
          await this.update(auditId, { status: 'rejected', confirmedBy: outcome.confirmedBy, error: release.reason });
          return { auditId, decision: 'denied', risk: decision.risk, reason: release.reason };
        }
        await this.update(auditId, { status: 'confirmed', confirmedBy: outcome.confirmedBy });
        return { auditId, decision: 'confirmed', risk: decision.risk, confirmedBy: outcome.confirmedBy };
      }
      case 'expired':
        return null;
      default:
        await this.update(auditId, { status: 'rejected', error: outcome.reason });
        return { auditId, decision: outcome.decision, risk: decision.risk, reason: outcome.reason };
    }
  }

  /**
   * Completes the record of an evaluated call (only its owner may: anyone else's id, a forged or
   * an altered one is a 404 that tells nothing), or creates one for a call that was never evaluated.
   */
  async audit(
    principal: Principal,
    input: { auditId?: string; toolName?: string; providerId?: string; result?: unknown; durationMs?: number; status?: 'completed' | 'failed'; error?: string },
  ): Promise<string> {
    const status: AuditStatus = input.status ?? 'completed';
    const patch = { status, result: input.result, duration: input.durationMs ?? null, ...(input.error !== undefined ? { error: input.error } : {}) };
    if (input.auditId !== undefined) {
      if (!this.deps.auditIds.ownedBy(input.auditId, principal)) throw new NotFoundError('Audit record');
      await this.deps.audit.update(input.auditId, patch);
      return input.auditId;
    }
    const provider = await this.deps.catalog.providers.getFor(principal, input.providerId!);
    const id = await this.deps.audit.open({
      id: this.deps.auditIds.issue(principal),
      userId: principal.userId,
      agentId: principal.agentId,
      endUserId: principal.endUserId,
      providerId: provider.id,
      tenantId: principal.tenantId,
      toolName: input.toolName!,
      arguments: null,
      status,
    });
    await this.deps.audit.update(id, patch);
    return id;
  }

  /** Enqueues a record; awaited before the answer, so an acknowledged decision is always audited (a queue failure is logged). */
  private async record(entry: Omit<AuditOpenEntry, 'status'> & { id: string }, status: AuditStatus, patch?: Parameters<AuditTrail['update']>[1]): Promise<void> {
    try {
      await this.deps.audit.open({ ...entry, status });
      if (patch) await this.deps.audit.update(entry.id, patch);
    } catch (err) {
      this.deps.logger.error({ reason: err instanceof Error ? err.message : String(err) }, 'could not enqueue audit record');
    }
  }

  private async update(id: string, patch: Parameters<AuditTrail['update']>[1]): Promise<void> {
    try {
      await this.deps.audit.update(id, patch);
    } catch (err) {
      this.deps.logger.error({ reason: err instanceof Error ? err.message : String(err) }, 'could not enqueue audit update');
    }
  }
}
