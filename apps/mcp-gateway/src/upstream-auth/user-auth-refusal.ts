import type { ProviderRecord } from '@agentgw/catalog';
import { newId } from '@agentgw/core';
import { GATEWAY_RPC, RpcError } from '../rpc-errors.js';
import type { UserAuth } from './user-credentials.js';

/** MCP's URLElicitationRequiredError (2025-11-25): the request needs the user to open a URL first. */
export const URL_ELICITATION_REQUIRED = -32042;

/** Whether the client declared URL-mode elicitation (`capabilities.elicitation.url`). */
const acceptsUrlElicitation = (capabilities: Readonly<Record<string, unknown>>): boolean => {
  const elicitation = capabilities.elicitation;
  return typeof elicitation === 'object' && elicitation !== null && 'url' in elicitation;
};

/**
 * Why a caller without their own auth for a per-user provider is refused, and the error they get:
 * the one rule for calls (audited, with `auditId`) and for every other request forwarded as them
 * (with none); read through caller-auth.ts's `refusalError`. A user who has not connected the
 * service gets `CREDENTIALS_REQUIRED` with the connect URL in the error's data (JSON-RPC -32003,
 * HTTP 403); a client that declared URL-mode elicitation gets it as MCP's
 * URLElicitationRequiredError (-32042, `data.elicitations: [{ mode: 'url', elicitationId, url,
 * message }]`) with the same data beside.
 */
export function userAuthRefusal(
  auth: Extract<UserAuth, { kind: 'missing' | 'no_user' }>,
  provider: ProviderRecord,
  capabilities: Readonly<Record<string, unknown>>,
  auditId: string | null,
): { reason: string; error: RpcError } {
  const audited = auditId === null ? {} : { auditId };
  if (auth.kind === 'no_user') {
    const reason = `This tool calls its provider as the user (${auth.serviceType}): the caller acts for no user`;
    return {
      reason,
      error: new RpcError(GATEWAY_RPC.DENIED, reason, 403, {
        decision: 'denied',
        reason,
        code: 'USER_REQUIRED',
        providerId: provider.id,
        ...audited,
      }),
    };
  }
  const reason = `Connect ${auth.serviceType} first: this tool calls its provider with your own ${auth.serviceType} account`;
  const elicitations = acceptsUrlElicitation(capabilities)
    ? { elicitations: [{ mode: 'url', elicitationId: newId(), url: auth.authUrl, message: reason }] }
    : null;
  const error = new RpcError(elicitations ? URL_ELICITATION_REQUIRED : GATEWAY_RPC.DENIED, reason, 403, {
    ...elicitations,
    decision: 'denied',
    reason,
    code: 'CREDENTIALS_REQUIRED',
    missing: [auth.serviceType],
    authUrls: { [auth.serviceType]: auth.authUrl },
    authUrl: auth.authUrl,
    providerId: provider.id,
    ...audited,
  });
  return { reason, error };
}

/** The tool's own headers with the user's auth added (the user's auth wins a clash). */
export const withUserAuth = (
  headers: Record<string, string> | null,
  userAuth: Record<string, string> | null,
): Record<string, string> | null => (userAuth === null ? headers : { ...(headers ?? {}), ...userAuth });
