import type { Principal } from '@agentgw/auth';
import { isPerUserAuth, type ProviderRecord } from '@agentgw/catalog';
import type { TokenExchange } from '@agentgw/credentials';
import { GATEWAY_RPC, RpcError } from '../rpc-errors.js';
import { exchangedAuthOf, exchangeRefusal } from './exchanged-tokens.js';
import { userAuthRefusal } from './user-auth-refusal.js';
import type { UserCredentials } from './user-credentials.js';

/**
 * What a request to a provider carries of its caller's own: nothing (`none`: the provider is
 * called with its own auth), the user's auth (their stored credential, or an exchanged token), or
 * why they have none. The one answer lists, calls and every other forwarded method read.
 */
export type CallerAuth =
  { kind: 'none' } | { kind: 'headers'; headers: Record<string, string> } | { kind: 'refused'; refusal: AuthRefusal };

/** Why a caller has no auth for a provider that answers as the user; each reader words it for its own answer. */
export type AuthRefusal =
  | { kind: 'missing'; serviceType: string; authUrl: string }
  | { kind: 'no_user'; serviceType: string }
  | { kind: 'exchange'; reason: string; code: 'SIGN_IN_TOKEN_REQUIRED' | 'TOKEN_EXCHANGE_REFUSED' }
  | { kind: 'unconfigured'; missing: 'token_exchange_settings' | 'service_type' };

/** Where a caller's auth is read from: their stored credentials, and the token exchange with the provider's client secret. */
export interface CallerAuthDeps {
  userCredentials: UserCredentials;
  exchange: () => TokenExchange;
  clientSecret(provider: ProviderRecord): string | null;
}

/** The caller's auth for `provider` (a shared-auth provider costs no lookup); `headers` are the request's own (a token exchange reads their bearer). */
export async function callerAuthOf(
  deps: CallerAuthDeps,
  provider: ProviderRecord,
  principal: Principal,
  headers: Pick<Headers, 'get'>,
): Promise<CallerAuth> {
  if (provider.authType === 'token_exchange') {
    const exchanged = await exchangedAuthOf(deps, principal, provider, headers);
    if (exchanged === null) return refused({ kind: 'unconfigured', missing: 'token_exchange_settings' });
    if (exchanged.kind === 'headers') return exchanged;
    return refused({ kind: 'exchange', reason: exchanged.reason, code: exchanged.code });
  }
  const auth = await deps.userCredentials.forCall(provider, principal);
  switch (auth.kind) {
    case 'headers':
      return auth;
    case 'missing':
    case 'no_user':
      return refused(auth);
    case 'none':
      return isPerUserAuth(provider.authType) ? refused({ kind: 'unconfigured', missing: 'service_type' }) : auth;
  }
}

const refused = (refusal: AuthRefusal): CallerAuth => ({ kind: 'refused', refusal });

/**
 * The error a request forwarded as the caller gets for a refusal: a call's carries its audit id,
 * anything else's none (only calls are audited). CREDENTIALS_REQUIRED with the connect URL,
 * USER_REQUIRED, SIGN_IN_TOKEN_REQUIRED / TOKEN_EXCHANGE_REFUSED, or USER_AUTH_UNAVAILABLE for
 * settings that name no source of the user's auth.
 */
export function refusalError(
  refusal: AuthRefusal,
  provider: ProviderRecord,
  capabilities: Readonly<Record<string, unknown>>,
  auditId: string | null,
): { reason: string; error: RpcError } {
  switch (refusal.kind) {
    case 'missing':
    case 'no_user':
      return userAuthRefusal(refusal, provider, capabilities, auditId);
    case 'exchange':
      return { reason: refusal.reason, error: exchangeRefusal(provider, refusal.reason, refusal.code, auditId) };
    case 'unconfigured': {
      const reason =
        refusal.missing === 'token_exchange_settings'
          ? 'The provider has no token exchange settings'
          : 'The provider calls as the user but names no credential service type';
      const error = new RpcError(GATEWAY_RPC.DENIED, reason, 403, {
        decision: 'denied',
        reason,
        code: 'USER_AUTH_UNAVAILABLE',
        providerId: provider.id,
      });
      return { reason, error };
    }
  }
}
