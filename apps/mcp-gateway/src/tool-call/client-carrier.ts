import { maskBody } from '@agentgw/audit';
import type { OAuthPrincipal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import type { ClientConfirmations, HeldCall, Logger } from '@agentgw/core';
import type { JsonRpcResponse } from '@agentgw/mcp-client';
import type { McpRequestContext } from '../mcp-context.js';
import type { ClientChannel } from '../relay/relay-contract.js';
import type { ServerRequestRelay } from '../relay/server-request-relay.js';
import type { AllowedCall } from './tool-call.command.js';
import type { HoldCarrier } from './tool-call.usecase.js';

/** What asking a person in their own client needs: the relay that asks and awaits the answer on any replica, the hub's answer port, and the console's page. */
export interface ClientCarrierDeps {
  relay: Pick<ServerRequestRelay, 'ask'>;
  answers: ClientConfirmations;
  /** The console's confirmations page (GATEWAY_PUBLIC_URL + /confirmations), for clients with URL elicitation only; null: none. */
  consolePage: string | null;
  logger: Logger;
}

/** The console's confirmations page under GATEWAY_PUBLIC_URL (where OAuth sign-in lives too); null without one. */
export const consolePageOf = (config: { GATEWAY_PUBLIC_URL?: string | undefined }): string | null =>
  config.GATEWAY_PUBLIC_URL ? new URL('/confirmations', config.GATEWAY_PUBLIC_URL).href : null;

/** How the client is asked: a form with approve/reject, or the console's page by URL. */
type Mode = 'form' | 'url';

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
    const { principal, channel, notify } = ctx;
    if (!allowed.carriers.includes('client') || channel === null || notify === null) return null;
    if (principal.via !== 'oauth' || principal.agentId !== null) return null;
    const mode = modeOf(ctx.clientCapabilities, this.deps.consolePage !== null);
    if (mode === null) return null;
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
    const request =
      mode === 'form' ? formQuestion(held, asker.provider) : urlQuestion(held, confirmationId, this.page());
    void this.deps.relay
      .ask(origin, request, stop.signal)
      .then(async (outcome) => {
        if (outcome.kind !== 'answered') return;
        answered = true;
        const confirmed = mode === 'form' ? decisionOf(outcome.response) : null;
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

  private page(): string {
    if (this.deps.consolePage === null) throw new Error('no console page to link');
    return this.deps.consolePage;
  }
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
function modeOf(capabilities: Readonly<Record<string, unknown>>, hasPage: boolean): Mode | null {
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

const formQuestion = (held: HeldCall, provider: ProviderRecord) => ({
  method: 'elicitation/create',
  params: { message: describe(held, provider), requestedSchema: DECISION_SCHEMA },
});

const urlQuestion = (held: HeldCall, confirmationId: string, page: string) => ({
  method: 'elicitation/create',
  params: {
    mode: 'url',
    elicitationId: confirmationId,
    url: page,
    message: `The call of ${held.toolName} (${held.risk} risk) waits for your confirmation on the console.`,
  },
});

/** The form's answer: approve → true; reject or decline → false; cancel (or anything else) → no decision, the console still can. */
function decisionOf(response: JsonRpcResponse): boolean | null {
  if (!('result' in response)) return null;
  const { action, content } = response.result as { action?: unknown; content?: { decision?: unknown } };
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
