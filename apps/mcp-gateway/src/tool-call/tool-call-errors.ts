import type { ProviderRecord } from '@agentgw/catalog';
import { toolNameProblem, type RiskLevel } from '@agentgw/core';
import type { McpResult } from '../mcp-context.js';
import { GATEWAY_RPC, invalidParams, RpcError } from '../rpc-errors.js';
import type { HeldCallResult } from './tool-call.command.js';

/*
 * The JSON-RPC errors a tools/call is refused with (the params, a denial, a confirmation that did
 * not release it, a provider whose list cannot be had).
 */

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
export const refusal = (held: Exclude<HeldCallResult, { kind: 'confirmed' | 'gone' }>): RpcError =>
  held.kind === 'denied'
    ? denied(held.reason, held.risk, held.auditId)
    : new RpcError(GATEWAY_RPC.CONFIRMATION_REJECTED, held.reason, 403, {
        decision: held.kind,
        reason: held.reason,
        confirmationId: held.confirmationId,
        auditId: held.auditId,
      });

/** A provider whose tool list cannot be had is not called unchecked. */
export const listUnavailable = (provider: ProviderRecord, reason: string): RpcError =>
  new RpcError(GATEWAY_RPC.UPSTREAM_FAILED, 'The provider did not list its tools, so the call cannot be checked', 502, {
    providerId: provider.id,
    reason,
  });
