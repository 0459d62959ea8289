import type { Principal } from '@agentgw/auth';
import { isPerUserAuth, type ProviderRecord } from '@agentgw/catalog';
import type { UpstreamTarget } from '@agentgw/mcp-client';
import type { TokenExchange } from '@agentgw/credentials';
import { exchangedAuthOf } from '../upstream-auth/exchanged-tokens.js';
import { credentialUserOf, type UserCredentials } from '../upstream-auth/user-credentials.js';
import type { UserListAuth } from './user-lists.js';

/** Whether a provider answers each user with their own credential, so its lists are fetched per user (a protected MCP server lists nothing without the user's token). */
export const listsPerUser = (provider: ProviderRecord): boolean =>
  isPerUserAuth(provider.authType) || provider.authType === 'token_exchange';

/** Whose lists they are (the cache key, matched by `credential.changed`): the user whose credential or sign-in token the calls carry; null when the caller acts for no user. */
export const listingUserOf = (provider: ProviderRecord, principal: Principal): string | null =>
  provider.authType === 'token_exchange' ? principal.endUserId || null : credentialUserOf(principal);

/** What resolving a caller's list auth needs: the same sources a call's auth is read from. */
export interface ListAuthDeps {
  userCredentials: UserCredentials;
  exchange: () => TokenExchange;
  clientSecret(provider: ProviderRecord): string | null;
}

/**
 * The target to ask a per-user provider for the caller's lists: the provider's own target with
 * the headers a call of the caller's carries (the same code: UserCredentials, exchangedAuthOf) and
 * an upstream session of that user's alone (`principal`, so no session carries two users' tokens);
 * or why the caller has none, with the connect URL when connecting helps.
 */
export async function userListAuth(
  deps: ListAuthDeps,
  provider: ProviderRecord,
  principal: Principal,
  requestHeaders: Pick<Headers, 'get'>,
  base: UpstreamTarget,
): Promise<UserListAuth> {
  const user = listingUserOf(provider, principal);
  const asUser = (headers: Record<string, string>): UserListAuth => ({
    kind: 'target',
    target: { ...base, headers: { ...base.headers, ...headers }, principal: JSON.stringify(['user-lists', user]) },
  });
  if (provider.authType === 'token_exchange') {
    const exchanged = await exchangedAuthOf(deps, principal, provider, requestHeaders);
    if (exchanged === null)
      return { kind: 'needs_auth', reason: 'The provider has no token exchange settings', authUrl: null };
    return exchanged.kind === 'headers'
      ? asUser(exchanged.headers)
      : { kind: 'needs_auth', reason: exchanged.reason, authUrl: null };
  }
  const auth = await deps.userCredentials.forCall(provider, principal);
  switch (auth.kind) {
    case 'headers':
      return asUser(auth.headers);
    case 'missing':
      return {
        kind: 'needs_auth',
        reason: `Connect ${auth.serviceType} first: this provider lists its tools for your own ${auth.serviceType} account`,
        authUrl: auth.authUrl || null,
      };
    case 'no_user':
      return {
        kind: 'needs_auth',
        reason: `This provider answers as the user (${auth.serviceType}): the caller acts for no user`,
        authUrl: null,
      };
    case 'none':
      return { kind: 'needs_auth', reason: 'The provider names no credential service type', authUrl: null };
  }
}
