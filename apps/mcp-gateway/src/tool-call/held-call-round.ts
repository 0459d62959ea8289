import type { ProviderRecord } from '@agentgw/catalog';
import type { ClientConfirmations, HeldCall, HoldOutcome } from '@agentgw/core';
import { JSON_RPC, MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import { GATEWAY_RPC, RpcError } from '../rpc-errors.js';
import { askablePerson, decisionOf, modeOf, questionOf, type Mode } from './client-carrier.js';
import { HELD_ROUND_PREFIX, type HeldRoundState, type HeldRoundStates } from './held-round-states.js';
import type { AllowedCall, ToolCallCommand } from './tool-call.command.js';
import { refusal } from './tool-call-errors.js';
import { heldCallOf } from './tool-call.usecase.js';

/** What a held call's input_required round needs: the hub (open, answer, settle on any replica), the sealed requestState, the console's page. */
export interface HeldCallRoundsDeps {
  hub: Pick<ClientConfirmations, 'openRound' | 'settleRound' | 'answerFromClient'>;
  states: HeldRoundStates;
  /** The console's confirmations page, for clients with URL elicitation only; null: none. */
  consolePage: string | null;
}

/** The key of the one input request a round carries (the client answers under it in `inputResponses`). */
export const ROUND_QUESTION_KEY = 'agentgw-confirmation';

/** The refusal of a round (or task) that ended without a decision (the gateway holding its deadline stopped, or it could not be announced). */
export const ROUND_ENDED_REASON = 'The confirmation ended without a decision; the call was not run.';

/** A retry's round, released: the call under its original record, re-checked by the caller (ToolCallUseCase.release). */
export type SettledRound =
  | { kind: 'ask'; result: McpResult }
  | {
      kind: 'released';
      call: ToolCallCommand;
      allowed: Pick<AllowedCall, 'auditId' | 'risk' | 'provider'>;
      confirmedBy: string | null;
    };

/**
 * The `client` carrier for a 2026-07-28 client, which holds no stream to be asked on: the held
 * call is answered at once with an `input_required` result (SEP-2322) carrying the same question
 * as the stream carrier (client-carrier.ts) and a sealed, prefixed `requestState` naming its
 * confirmation. The client's retry, on any replica, hands its answer to the hub (first decision
 * wins across carriers and replicas, bound to the args hash) and then finds the confirmation as it
 * stands: still pending → asked again; confirmed → released once (its approval spent), run under
 * the original audit record; rejected or timed out → the refusal. The console and push decide it
 * meanwhile as any other.
 */
export class HeldCallRounds {
  constructor(private readonly deps: HeldCallRoundsDeps) {}

  /** How a held call is asked by a round, or null: only a 2026-07-28 client without a stream, the person and rule as askablePerson allows. */
  modeFor(ctx: McpRequestContext, allowed: AllowedCall): Mode | null {
    if (ctx.channel !== null || ctx.protocolVersion !== MODERN_PROTOCOL_VERSION) return null;
    return askablePerson(ctx, allowed, this.deps.consolePage !== null)?.mode ?? null;
  }

  /** The requestState of a retry that answers one of these rounds (by its prefix), else null: the call is not a round's retry. */
  retryOf(params: McpResult): string | null {
    const state = params.requestState;
    return typeof state === 'string' && state.startsWith(HELD_ROUND_PREFIX) ? state : null;
  }

  /** The first round: the confirmation stored and announced (not held), its record opened, the question answered at once. */
  async ask(call: ToolCallCommand, allowed: AllowedCall, mode: Mode, opened: Promise<void>): Promise<McpResult> {
    const held = heldCallOf(call, allowed);
    const { confirmationId } = await this.deps.hub.openRound(held);
    await opened;
    const { auditId, risk, provider } = allowed;
    const state = { confirmationId, auditId, providerId: provider.id, toolName: call.toolName, risk };
    return this.inputRequired(mode, held, provider, state, this.deps.states.issue(state, call.principal));
  }

  /**
   * A retry: its state opened for this principal and call (else refused), its answer (if it
   * carries a decision) given to the hub, then the confirmation as it stands (see the class).
   */
  async settle(
    retried: ToolCallCommand,
    params: McpResult,
    ctx: McpRequestContext,
    text: string,
  ): Promise<SettledRound> {
    const { principal } = ctx;
    const { provider } = retried.target;
    const state = this.deps.states.open(text, principal);
    if (
      state === null ||
      principal.via !== 'oauth' ||
      state.providerId !== provider.id ||
      state.toolName !== retried.toolName
    )
      throw notThisRound();
    const { auditId, risk, confirmationId } = state;
    const call = { ...retried, auditId };
    const allowed = { auditId, risk, provider };
    const held = heldCallOf(call, allowed);
    const confirmed = decisionOf(answerIn(params));
    if (confirmed !== null) {
      const answer = { confirmed, userId: principal.userId, clientId: principal.oauth.clientId };
      if ((await this.deps.hub.answerFromClient(confirmationId, held, answer)) === 'refused') throw notThisRound();
    }
    const outcome = await this.deps.hub.settleRound(confirmationId, held);
    switch (outcome.decision) {
      case 'pending':
        return { kind: 'ask', result: this.inputRequired(this.modeOn(ctx), held, provider, state, text) };
      case 'refused':
        throw notThisRound();
      case 'confirmed':
        return { kind: 'released', call, allowed, confirmedBy: outcome.confirmedBy };
      default:
        throw refusal(refused(outcome, state));
    }
  }

  /** The mode the retrying client can still be asked in; a client that dropped elicitation cannot take the question. */
  private modeOn(ctx: McpRequestContext): Mode {
    const mode = modeOf(ctx.clientCapabilities, this.deps.consolePage !== null);
    if (mode !== null) return mode;
    throw new RpcError(
      JSON_RPC.MISSING_REQUIRED_CLIENT_CAPABILITY,
      'The held call waits for your confirmation, which needs the elicitation capability',
      400,
      { missing: ['elicitation'] },
    );
  }

  private inputRequired(
    mode: Mode,
    held: HeldCall,
    provider: ProviderRecord,
    state: HeldRoundState,
    requestState: string,
  ): McpResult {
    const question = questionOf(mode, 'modern', held, provider, {
      confirmationId: state.confirmationId,
      page: this.deps.consolePage,
    });
    return { resultType: 'input_required', inputRequests: { [ROUND_QUESTION_KEY]: question }, requestState };
  }
}

/** The answer to the round's (or a held-call task's) question under its key (a bare elicitation result), if the params carry one. */
export const answerIn = (params: McpResult): unknown => {
  const responses = params.inputResponses;
  return typeof responses === 'object' && responses !== null
    ? (responses as Record<string, unknown>)[ROUND_QUESTION_KEY]
    : undefined;
};

/** A round that did not end confirmed, as the held call's refusal. */
const refused = (outcome: Exclude<HoldOutcome, { decision: 'confirmed' }>, state: HeldRoundState) => ({
  kind: outcome.decision === 'expired' ? ('rejected' as const) : outcome.decision,
  auditId: state.auditId,
  risk: state.risk,
  reason: outcome.decision === 'expired' ? ROUND_ENDED_REASON : outcome.reason,
  confirmationId: state.confirmationId,
});

/** A requestState that is not this principal's round for this call (foreign, forged, altered, or another call's): refused, nothing learnt. */
const notThisRound = () =>
  new RpcError(GATEWAY_RPC.DENIED, 'This confirmation is not yours to answer, or not for this call', 403, {
    decision: 'denied',
  });
