import type { RiskLevel } from './enums.js';

/**
 * The port between the places a tool call can be held (unified MCP, per-provider proxy,
 * tool-gate) and the confirmation hub that decides it. The hub's package implements it; the
 * call sites only see this.
 */
export interface HeldCall {
  /** The audit record of this call (exists before the hold starts). */
  auditId: string;
  agentId: string | null;
  /** The authenticated caller (the user, or the agent's owner acting through a runtime token). */
  userId: string | null;
  /** The real end user the call is made for; the confirmer. */
  endUserId: string | null;
  tenantId: string | null;
  providerId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  risk: RiskLevel;
}

/** How a hold ended. `expired`: the held client went away before a decision. */
export type HoldOutcome =
  | { decision: 'confirmed'; confirmationId: string; confirmedBy: string | null }
  | { decision: 'rejected'; confirmationId: string; reason: string }
  | { decision: 'timeout'; confirmationId: string; reason: string }
  | { decision: 'expired'; confirmationId: string };

export interface HoldOptions {
  /** Aborted when the held client disconnects: the hold ends `expired`, the confirmation stays answerable for an exact-call token. */
  signal: AbortSignal;
  /** Called while the call waits (for MCP progress/status notifications on the held stream). */
  onStatus?: (status: { confirmationId: string; message: string; elapsedMs: number }) => void;
}

export interface ConfirmationGate {
  /**
   * Creates a pending confirmation (stored, CONFIRMATION_REQUIRED emitted, deadline scheduled)
   * and resolves when it is decided, times out or the caller goes away.
   */
  hold(call: HeldCall, options: HoldOptions): Promise<HoldOutcome>;
  /**
   * Exact-call approval: true, and the token is spent (confirmation `consumed`), when `token`
   * was issued by a confirming answer for exactly this call; false otherwise.
   */
  redeem(token: string, call: HeldCall): Promise<boolean>;
}

/** A person's answer from their own MCP client (the `client` carrier): who answered, through which OAuth client. */
export interface ClientAnswer {
  confirmed: boolean;
  /** The signed-in person answering: must be the one the call acts for. */
  userId: string;
  /** The OAuth client they answered in (recorded on the confirmation). */
  clientId: string;
}

/** What a client's answer came to: it decided the confirmation, another decision was first, or it was not this person's (or this call's) to answer. */
export type ClientAnswerOutcome = 'applied' | 'already_decided' | 'refused';

/**
 * The port a held call's own MCP client answers through, beside the console: the answer is
 * decided like a console one (first decision wins, bound to the exact call). Carriers other than
 * the console are named by CONFIRMATION_CARRIERS.
 */
export interface ClientConfirmations {
  answerFromClient(confirmationId: string, call: HeldCall, answer: ClientAnswer): Promise<ClientAnswerOutcome>;
  /**
   * Stores and announces a pending confirmation for `call` that no request holds (a 2026-07-28
   * client asked by an `input_required` round): its deadline ends it, the client's retry settles it.
   */
  openRound(call: HeldCall): Promise<{ confirmationId: string; expiresAt: Date }>;
  /** Where a round's confirmation stands for exactly this call, read on any replica (see RoundOutcome). */
  settleRound(confirmationId: string, call: HeldCall): Promise<RoundOutcome>;
  /** The caller withdraws the pending confirmation of exactly this call (a held-call task's `tasks/cancel`): first decision wins. */
  cancelRound(confirmationId: string, call: HeldCall): Promise<ClientAnswerOutcome>;
}

/**
 * A round's confirmation as a retry finds it: still `pending`; `refused` when it is not this
 * call's (another call, person or agent: the args hash differs, or it does not exist); else how
 * it ended, `confirmed` only for the one retry that spent the approval (one approval, one run).
 */
export type RoundOutcome =
  | HoldOutcome
  | { decision: 'pending'; confirmationId: string; expiresAt: Date }
  | { decision: 'refused'; confirmationId: string };
