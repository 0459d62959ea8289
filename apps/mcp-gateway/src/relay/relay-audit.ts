import type { AuditTrail } from '@agentgw/audit';
import { newTimeOrderedId, type Logger } from '@agentgw/core';
import type { JsonRpcRequest, JsonRpcResponse } from '@agentgw/mcp-client';
import { auditEntryOf } from '../tool-call/tool-call-record.js';
import type { RelayOrigin } from './relay-contract.js';

/** How a relayed request ended, for its audit record. */
export type RelayAuditOutcome = { status: 'completed'; result: unknown } | { status: 'failed'; error: string };

/** A client's answer as the outcome of its relayed request. */
export const relayAuditOutcomeOf = (response: JsonRpcResponse): RelayAuditOutcome =>
  'result' in response
    ? { status: 'completed', result: response.result }
    : { status: 'failed', error: response.error.message };

/**
 * The audit records of relayed requests that act for the user (sampling, elicitation): opened
 * when asked, attributed to the call they happened in; finished with the answer or the failure.
 */
export class RelayAudit {
  constructor(private readonly deps: { audit: AuditTrail; logger: Logger }) {}

  /** The relayed request's own record: who, which provider, what it asked, and the call it belongs to. */
  opened(origin: Omit<RelayOrigin, 'target'>, request: JsonRpcRequest): Promise<string> {
    const args = {
      relayedFor: origin.call?.auditId ?? null,
      tool: origin.call?.toolName ?? null,
      params: request.params ?? {},
    };
    return this.deps.audit.open(
      auditEntryOf(
        { principal: origin.principal, auditId: newTimeOrderedId(), toolName: request.method, arguments: args },
        origin.provider.id,
        'pending',
      ),
    );
  }

  /** Ends a record (none for a request that is not audited); a failed update is logged, never thrown. */
  async finished(auditId: string | null, outcome: RelayAuditOutcome): Promise<void> {
    if (auditId === null) return;
    await this.deps.audit
      .update(auditId, outcome)
      .catch((err: unknown) => this.deps.logger.error({ err, auditId }, 'relayed request audit update failed'));
  }
}
