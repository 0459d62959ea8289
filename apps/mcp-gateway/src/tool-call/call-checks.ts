import type { ProviderRecord } from '@agentgw/catalog';
import type { McpRequestContext } from '../mcp-context.js';
import { toolParamHeaders } from '../methods/param-headers.js';
import type { CallerProviders } from '../provider-view/caller-providers.js';
import { egressRefused, GATEWAY_RPC, invalidParams, RpcError } from '../rpc-errors.js';
import { QUARANTINE_REASONS, type ToolPins } from '../tool-pins/tool-pins.js';
import { refusalError } from '../upstream-auth/caller-auth.js';
import { withUserAuth } from '../upstream-auth/user-auth-refusal.js';
import type { ToolCallCommand } from './tool-call.command.js';
import { listUnavailable } from './tool-call-errors.js';
import type { ToolCallUseCase } from './tool-call.usecase.js';

/** Records a call refused for its user's auth: before it was opened (`refused`), or after its hold released it. */
export type RefusalRecorder = (call: ToolCallCommand, providerId: string, reason: string) => Promise<void>;

/** What the checks read: the caller's view of providers, the pins, and the records of refusals. */
export interface CallChecksDeps {
  calls: Pick<ToolCallUseCase, 'record'>;
  view: CallerProviders;
  pins: ToolPins;
}

/**
 * The checks an MCP tools/call passes between its decision and its forwarding, each refusal
 * recorded before it is answered: the tool is listed, not quarantined, and the caller has the
 * auth a per-user provider is called with (the headers the call then carries).
 */
export class CallChecks {
  constructor(private readonly deps: CallChecksDeps) {}

  /**
   * Only a name the provider listed goes out: a variant of a denied name (case, look-alike) that
   * no rule matched never reaches an upstream that matches names loosely. Answered from the
   * cached list (the caller's own for a per-user provider); a provider whose list cannot be had
   * is not called unchecked (502), and a caller with no credential for a per-user one is refused
   * as its call would be (CREDENTIALS_REQUIRED with the connect URL, audited).
   */
  async assertListed(
    call: ToolCallCommand,
    provider: ProviderRecord,
    ctx: McpRequestContext,
    retried = false,
  ): Promise<void> {
    const { view, calls } = this.deps;
    const name = call.toolName;
    // The caller as the call was decided for: the context itself unless a release changed who (no copy per call).
    const caller = call.principal === ctx.principal ? ctx : { ...ctx, principal: call.principal };
    const listing = await view.listed(provider, caller, name);
    if (listing.kind === 'listed') return;
    if (listing.kind === 'unlisted') throw invalidParams(`Unknown tool: ${name}`);
    if (listing.kind === 'needs_auth') {
      await this.userAuthOrRefuse(call, provider, ctx, (c, p, r) => calls.record.refused(c, p, r));
      // Not refused: the user connected within the cached answer's seconds, so their list is asked for now.
      if (!retried && view.forgetCallerLists(provider, call.principal))
        return this.assertListed(call, provider, ctx, true);
      throw listUnavailable(provider, listing.needsAuth.reason);
    }
    if (listing.refusal) throw egressRefused(listing.refusal, provider.id);
    throw listUnavailable(provider, listing.failure);
  }

  /** A tool whose definition is quarantined (pinning) is not called: refused before it is forwarded, audited as rejected with the reason. */
  async assertNotQuarantined(
    call: ToolCallCommand,
    provider: ProviderRecord,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    const cached = this.deps.view.cachedTools(provider, call.principal, capabilities);
    const status = await this.deps.pins.quarantineOf(provider, cached, call.toolName);
    if (status === null) return;
    const reason = QUARANTINE_REASONS[status];
    await this.deps.calls.record.refused(call, provider.id, reason);
    throw new RpcError(GATEWAY_RPC.DENIED, reason, 403, {
      decision: 'denied',
      reason,
      code: 'TOOL_QUARANTINED',
      status,
      providerId: provider.id,
      auditId: call.auditId,
    });
  }

  /**
   * The headers a call carries upstream: the tool's `Mcp-Param-*` and, for a provider that is called
   * as the user, that user's own auth (a stored token, refreshed when near expiry, or an exchanged
   * one). A user without it is refused with the connect URL, recorded through `refused`.
   */
  async callHeaders(
    call: ToolCallCommand,
    provider: ProviderRecord,
    ctx: McpRequestContext,
    refused: RefusalRecorder,
  ): Promise<Record<string, string> | null> {
    const userAuth = await this.userAuthOrRefuse(call, provider, ctx, refused);
    const cached = this.deps.view.cachedTools(provider, call.principal, ctx.clientCapabilities);
    return withUserAuth(toolParamHeaders(cached, call.toolName, call.arguments, ctx), userAuth);
  }

  /**
   * The caller's own auth a call carries (null: none of theirs), or its refusal, recorded through
   * `refused`: CREDENTIALS_REQUIRED with the connect URL (as a URL elicitation when the client
   * declared it), USER_REQUIRED, SIGN_IN_TOKEN_REQUIRED or TOKEN_EXCHANGE_REFUSED.
   */
  private async userAuthOrRefuse(
    call: ToolCallCommand,
    provider: ProviderRecord,
    ctx: McpRequestContext,
    refused: RefusalRecorder,
  ): Promise<Record<string, string> | null> {
    const auth = await this.deps.view.auth(provider, { principal: call.principal, headers: ctx.headers });
    if (auth.kind === 'headers') return auth.headers;
    // Settings that name no source of the user's auth: the call goes on without it and is refused before it is sent (forwarding).
    if (auth.kind === 'none' || auth.refusal.kind === 'unconfigured') return null;
    const { reason, error } = refusalError(auth.refusal, provider, ctx.clientCapabilities, call.auditId);
    await refused(call, provider.id, reason);
    throw error;
  }
}
