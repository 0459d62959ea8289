import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import type { ConfirmationCarrier, RiskLevel } from '@agentgw/core';

/**
 * Where a call goes: `routed` — the unified endpoint resolved the exposed name the client called
 * to `provider` among the caller's providers (narrowed by `providers=`; see tool-names/) and the
 * command carries the upstream name —, or to one provider named explicitly — `proxied` (the MCP
 * proxy, which checked provider access before dispatching) or `named` (the tool gate). A provider
 * owns only the names its pattern matches.
 */
export type ToolCallTarget =
  | { kind: 'routed'; providerFilter: readonly string[] | null; provider: ProviderRecord }
  | { kind: 'proxied'; provider: ProviderRecord }
  | { kind: 'named'; provider: ProviderRecord };

/** One tool call to decide: who makes it, what it calls, where it goes and the audit id it is recorded under. */
export interface ToolCallCommand {
  principal: Principal;
  /** The upstream's name of the tool: what policy, audit and confirmations see. */
  toolName: string;
  arguments: Record<string, unknown>;
  target: ToolCallTarget;
  /** The acting agent wants every call confirmed by a human (`requireConfirmation`). */
  alwaysConfirm: boolean;
  /** The record's id (the tool gate's are bound to their owner, see audit-ids.ts). */
  auditId: string;
}

/**
 * Everything a tool call can come to; the MCP tools/call (mcp-tool-call.usecase.ts) and the tool gate only translate it.
 * `denied`: refused by pattern, provider
 * access, policy or the re-check after release. `allowed`: may run now, `hold` says whether a
 * human must confirm first and `carriers` where (the deciding rule's, else console and push). `confirmed`: released (by a human, or a redeemed exact-call token,
 * `confirmedBy` null) and re-checked: it runs as `principal` against `provider`, both read anew.
 * `rejected` / `timeout`: the confirmation ended so. `gone`: the caller left while it was held.
 * `completed` / `failed`: the forwarded call's outcome (the MCP tools/call only; the tool gate
 * forwards nothing, its runtime reports the outcome).
 */
export type ToolCallResult =
  | { kind: 'denied'; auditId: string; risk: RiskLevel; reason: string }
  | {
      kind: 'allowed';
      auditId: string;
      risk: RiskLevel;
      provider: ProviderRecord;
      hold: boolean;
      carriers: readonly ConfirmationCarrier[];
    }
  | {
      kind: 'confirmed';
      auditId: string;
      risk: RiskLevel;
      confirmedBy: string | null;
      principal: Principal;
      provider: ProviderRecord;
    }
  | { kind: 'rejected' | 'timeout'; auditId: string; risk: RiskLevel; reason: string; confirmationId: string }
  | { kind: 'gone' }
  | { kind: 'completed' | 'failed'; auditId: string; result: Record<string, unknown> };

/** What `decide` answers. */
export type ToolCallDecision = Extract<ToolCallResult, { kind: 'denied' | 'allowed' }>;
/** What `hold` answers for an allowed call that must be confirmed. */
export type HeldCallResult = Exclude<ToolCallResult, { kind: 'allowed' | 'completed' | 'failed' }>;
/** An allowed call, ready to be opened, held or forwarded. */
export type AllowedCall = Extract<ToolCallResult, { kind: 'allowed' }>;
