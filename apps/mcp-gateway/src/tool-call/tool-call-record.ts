import type { AuditOpenEntry, AuditPatch, AuditTrail, OpenTiming } from '@agentgw/audit';
import type { AuditStatus, Logger } from '@agentgw/core';
import type { ToolCallCommand } from './tool-call.command.js';

/** What a record is opened from: the caller, the call and its id. */
export type RecordedCall = Pick<ToolCallCommand, 'principal' | 'auditId' | 'toolName'> & { arguments: unknown };

/** How a forwarded call ended (the MCP call's upstream answer, or what a runtime reports). */
export type CallOutcome = { status: 'completed' | 'failed'; result?: unknown; error?: string; duration: number | null };

/** The one mapping of a caller to its audit record: who (user, agent, end user, tenant), what, where. */
export function auditEntryOf(
  call: RecordedCall,
  providerId: string,
  status: AuditStatus,
): AuditOpenEntry & { id: string } {
  const { principal } = call;
  return {
    id: call.auditId,
    userId: principal.userId,
    agentId: principal.agentId,
    endUserId: principal.endUserId,
    providerId,
    tenantId: principal.tenantId,
    ...(principal.via === 'oauth' && { oauthClientId: principal.oauth.clientId }),
    toolName: call.toolName,
    arguments: call.arguments,
    status,
  };
}

/**
 * Where a tool call is audited — every write the gateway makes to a call's record, one writer per fact:
 * - refused before it runs (pattern, provider access, policy): one record, rejected with its reason;
 * - going ahead: opened as `pending`, enqueued beside the call;
 * - held: how the confirmation ended (confirmed and by whom, rejected, timed out, refused over
 *   the pending caps, caller gone) is written by the confirmation state machine
 *   (`@agentgw/confirmations`) on the replica whose transition wins — whether or not a caller
 *   still waits — and never again here;
 * - released by a redeemed exact-call token (no confirmation decides this record): `confirmed` here;
 * - released, then refused by the re-check: `rejected` with the reason here;
 * - forwarded: its outcome (mcp-tool-call.usecase.ts), or what the tool gate's runtime reports.
 * The writes the call's answer depends on are awaited before it; a queue failure is logged, not
 * turned into a failed call.
 */
export class ToolCallRecord {
  constructor(private readonly deps: { audit: AuditTrail; logger: Logger }) {}

  /** A call refused before anything ran: one job, opened as rejected with its reason. */
  refused(call: RecordedCall, providerId: string, error: string): Promise<void> {
    const entry = auditEntryOf(call, providerId, 'rejected');
    entry.error = error;
    return this.logged(this.deps.audit.open(entry));
  }

  /** A call that goes ahead (now, or once confirmed); `with-outcome` when its outcome follows in moments (see OpenTiming). */
  opened(call: RecordedCall, providerId: string, timing: OpenTiming = 'now'): Promise<void> {
    return this.logged(this.deps.audit.open(auditEntryOf(call, providerId, 'pending'), timing));
  }

  /** Released by an exact-call token: no confirmation decides this record, so the call does. */
  redeemed(auditId: string): Promise<void> {
    return this.logged(this.deps.audit.update(auditId, REDEEMED));
  }

  /** Released, but what holds now refuses it (the confirmation's own outcome is already recorded). */
  refusedAfterRelease(auditId: string, error: string): Promise<void> {
    return this.logged(this.deps.audit.update(auditId, { status: 'rejected', error }));
  }

  /** The forwarded call's outcome. */
  finished(auditId: string, outcome: CallOutcome): Promise<void> {
    return this.logged(this.deps.audit.update(auditId, outcome));
  }

  /** What a runtime reports after running an evaluated call itself; it asked for this write, so a queue failure fails its request. */
  async reported(auditId: string, outcome: CallOutcome): Promise<void> {
    await this.deps.audit.update(auditId, outcome);
  }

  /** The whole record of a call a runtime ran without evaluating it (as `reported`, a queue failure fails the request). */
  async reportedUnevaluated(call: RecordedCall, providerId: string, outcome: CallOutcome): Promise<void> {
    await this.deps.audit.open(auditEntryOf(call, providerId, outcome.status));
    await this.deps.audit.update(call.auditId, outcome);
  }

  private async logged(write: Promise<unknown>): Promise<void> {
    try {
      await write;
    } catch (err) {
      this.failed(err);
    }
  }

  private failed(err: unknown): void {
    this.deps.logger.error(
      { reason: err instanceof Error ? err.message : String(err) },
      'could not enqueue audit record',
    );
  }
}

const REDEEMED: AuditPatch = Object.freeze({ status: 'confirmed', confirmedBy: null });
