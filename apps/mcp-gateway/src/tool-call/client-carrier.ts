import { maskBody } from '@agentgw/audit';
import type { OAuthPrincipal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import type { ClientConfirmations, HeldCall, Logger } from '@agentgw/core';
import type { McpRequestContext } from '../mcp-context.js';
import type { ClientChannel } from '../relay/relay-contract.js';
import type { ServerRequestRelay } from '../relay/server-request-relay.js';
import type { AllowedCall } from './tool-call.command.js';
import type { HoldCarrier } from './tool-call.usecase.js';

/** What asking a person in their own client needs: the relay that asks and awaits the answer on any replica, the hub's answer port, and the console's page. */
export interface ClientCarrierDeps {
  relay: Pick<ServerRequestRelay, 'ask'>;
  answers: Pick<ClientConfirmations, 'answerFromClient'>;
  /** The console's confirmations page (GATEWAY_PUBLIC_URL + /confirmations), for clients with URL elicitation only; null: none. */
  consolePage: string | null;
  logger: Logger;
}

/** The console's confirmations page under GATEWAY_PUBLIC_URL (where OAuth sign-in lives too); null without one. */
export const consolePageOf = (config: { GATEWAY_PUBLIC_URL?: string | undefined }): string | null =>
  config.GATEWAY_PUBLIC_URL ? new URL('/confirmations', config.GATEWAY_PUBLIC_URL).href : null;

/** How the client is asked: a form with approve/reject, or the console's page by URL. */
export type Mode = 'form' | 'url';

/** The revision the question is shaped for: 2026-07-28 URL elicitation has no `elicitationId` (nor its completion notice). */
export type QuestionShape = 'legacy' | 'modern';

/** The decision field of the form, its two values. */
const DECISION_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    decision: {
      type: 'string',
      title: 'Decision',
      enum: ['approve', 'reject'],
      description: 'Approve or reject the call',
    },
  },
  required: ['decision'],
});

/** Longest arguments text put in the question; the console shows the rest. */
const MAX_ARGUMENTS_CHARS = 2_000;

/**
 * The `client` carrier: a held call asked of the person in the MCP client they made it from.
 * Only when the deciding rule opted in, the caller is a person signed in through the gateway's
 * OAuth acting for themselves (never an agent runtime, an API key or a session token), and the
 * client can take an elicitation on this call's stream. A form client answers approve/reject,
 * which goes through the hub like a console decision; a URL-only client gets the console's page.
 * When the hold ends otherwise (console, push, timeout), the question is cancelled (form) or
 * said complete (URL).
 */
export class ClientCarrier {
  constructor(private readonly deps: ClientCarrierDeps) {}

  /** The carrier for this held call, or null when it may not or cannot ask in the client. */
  forCall(ctx: McpRequestContext, allowed: AllowedCall): HoldCarrier | null {
    const { channel, notify } = ctx;
    const askable = askablePerson(ctx, allowed, this.deps.consolePage !== null);
    if (askable === null || channel === null || notify === null) return null;
    const { principal, mode } = askable;
    const asker: Asker = {
      principal,
      channel,
      notify,
      capabilities: ctx.clientCapabilities,
      provider: allowed.provider,
    };
    return { open: (confirmationId, held) => this.ask(asker, mode, confirmationId, held) };
  }

  /** Sends the question and hands a form's answer to the hub; returns what closes it when the hold ends. */
  private ask(asker: Asker, mode: Mode, confirmationId: string, held: HeldCall): () => void {
    const stop = new AbortController();
    let sentId: string | number | null = null;
    let answered = false;
    const channel: ClientChannel = {
      owner: asker.channel.owner,
      send: (request) => {
        sentId = request.id;
        asker.channel.send(request);
      },
    };
    const origin = {
      provider: asker.provider,
      principal: asker.principal,
      channel,
      capabilities: asker.capabilities,
      call: { auditId: held.auditId, toolName: held.toolName },
    };
    const request = questionOf(mode, 'legacy', held, asker.provider, { confirmationId, page: this.deps.consolePage });
    void this.deps.relay
      .ask(origin, request, stop.signal)
      .then(async (outcome) => {
        if (outcome.kind !== 'answered') return;
        answered = true;
        const { response } = outcome;
        const confirmed = mode === 'form' && 'result' in response ? decisionOf(response.result) : null;
        if (confirmed === null) return;
        const { userId, oauth } = asker.principal;
        await this.deps.answers.answerFromClient(confirmationId, held, { confirmed, userId, clientId: oauth.clientId });
      })
      .catch((err: unknown) =>
        this.deps.logger.warn(
          { confirmationId, reason: err instanceof Error ? err.message : 'unknown' },
          'client confirmation failed',
        ),
      );
    return () => {
      stop.abort();
      if (mode === 'url') return asker.notify(elicitationComplete(confirmationId));
      if (!answered && sentId !== null) asker.notify(cancelled(sentId));
    };
  }
}

/**
 * Whom a held call may be asked of in their own client, and how: only when the deciding rule
 * opted in to the `client` carrier, the caller is a person signed in through the gateway's OAuth
 * acting for themselves (never an agent runtime, an API key or a session token), and the client
 * declared elicitation it can be asked with (see modeOf). Null: not in the client.
 */
export function askablePerson(
  ctx: Pick<McpRequestContext, 'principal' | 'clientCapabilities'>,
  allowed: Pick<AllowedCall, 'carriers'>,
  hasPage: boolean,
): { principal: OAuthPrincipal; mode: Mode } | null {
  const { principal } = ctx;
  if (!allowed.carriers.includes('client')) return null;
  if (principal.via !== 'oauth' || principal.agentId !== null) return null;
  const mode = modeOf(ctx.clientCapabilities, hasPage);
  return mode === null ? null : { principal, mode };
}

/** Who is asked and where. */
interface Asker {
  principal: OAuthPrincipal;
  channel: ClientChannel;
  notify: NonNullable<McpRequestContext['notify']>;
  capabilities: Readonly<Record<string, unknown>>;
  provider: ProviderRecord;
}

/**
 * Form when the client declared it (an empty `elicitation` is form, as the spec says), else the
 * console's page when the client declared URL elicitation and there is a page; null: neither.
 */
export function modeOf(capabilities: Readonly<Record<string, unknown>>, hasPage: boolean): Mode | null {
  const elicitation = capabilities.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return null;
  const declared = Object.keys(elicitation);
  if (declared.length === 0 || declared.includes('form')) return 'form';
  return declared.includes('url') && hasPage ? 'url' : null;
}

/** What the question says: tool, provider, risk and the arguments as the console shows them (masked the same way). */
function describe(held: HeldCall, provider: ProviderRecord): string {
  const args = JSON.stringify(maskBody(held.arguments), null, 2);
  const shown = args.length > MAX_ARGUMENTS_CHARS ? `${args.slice(0, MAX_ARGUMENTS_CHARS)}…` : args;
  return `Approve the call of ${held.toolName} on ${provider.name} (${held.risk} risk)?\nArguments: ${shown}`;
}

/**
 * The `elicitation/create` a held call is asked with: a form with the description and the
 * approve/reject choice, or (URL mode) the console's page, keyed by the confirmation where the
 * revision has elicitation ids. Shared by the stream question here and the 2026-07-28
 * input_required round (held-call-round.ts).
 */
export function questionOf(
  mode: Mode,
  shape: QuestionShape,
  held: HeldCall,
  provider: ProviderRecord,
  where: { confirmationId: string; page: string | null },
): { method: 'elicitation/create'; params: Record<string, unknown> } {
  if (mode === 'form')
    return {
      method: 'elicitation/create',
      params: { message: describe(held, provider), requestedSchema: DECISION_SCHEMA },
    };
  if (where.page === null) throw new Error('no console page to link');
  const message = `The call of ${held.toolName} (${held.risk} risk) waits for your confirmation on the console.`;
  const params = { mode: 'url', url: where.page, message };
  return {
    method: 'elicitation/create',
    params: shape === 'legacy' ? { ...params, elicitationId: where.confirmationId } : params,
  };
}

/** A form's elicitation result: approve → true; reject or decline → false; cancel (or anything else) → no decision, the console still can. */
export function decisionOf(result: unknown): boolean | null {
  if (typeof result !== 'object' || result === null) return null;
  const { action, content } = result as { action?: unknown; content?: { decision?: unknown } };
  if (action === 'decline') return false;
  if (action !== 'accept') return null;
  if (content?.decision === 'approve') return true;
  return content?.decision === 'reject' ? false : null;
}

const cancelled = (requestId: string | number) => ({
  jsonrpc: '2.0' as const,
  method: 'notifications/cancelled',
  params: { requestId, reason: 'The confirmation was decided elsewhere or ended.' },
});

const elicitationComplete = (elicitationId: string) => ({
  jsonrpc: '2.0' as const,
  method: 'notifications/elicitation/complete',
  params: { elicitationId },
});
