import type { Principal } from '@agentgw/auth';
import { isPerUserAuth, type Catalog, type ProviderRecord } from '@agentgw/catalog';
import type { TokenExchange } from '@agentgw/credentials';
import { NO_CLIENT_CAPABILITIES, type UpstreamTarget } from '@agentgw/mcp-client';
import { mayReach, routingSet } from '../tool-call/tool-access.js';
import { callerAuthOf, type CallerAuth } from '../upstream-auth/caller-auth.js';
import { credentialUserOf, type UserCredentials } from '../upstream-auth/user-credentials.js';
import { upstreamTarget } from '../upstream-targets.js';
import type { ListAuth, Lister, ListerToolListing, ListItem, ListKind, NeedsAuth, ProviderList } from './list-items.js';
import { sharedLister, type ProviderLists } from './provider-lists.js';

/** Whether a provider answers each user with their own credential, so its lists are fetched per user (a protected MCP server lists nothing without the user's token). */
export const listsPerUser = (provider: ProviderRecord): boolean =>
  isPerUserAuth(provider.authType) || provider.authType === 'token_exchange';

/** Whose lists they are (the cache key, matched by `credential.changed`): the user whose credential or sign-in token the calls carry; null when the caller acts for no user. */
export const listingUserOf = (provider: ProviderRecord, principal: Principal): string | null =>
  provider.authType === 'token_exchange' ? principal.endUserId || null : credentialUserOf(principal);

/** Who asks: the caller, their request's headers (a token exchange reads their bearer) and the capabilities their lists are kept per. */
export interface Caller {
  principal: Principal;
  headers: Pick<Headers, 'get'>;
  clientCapabilities: Readonly<Record<string, unknown>>;
}

/** What the caller's view is read from: the catalog, the one list cache and the sources of the caller's own auth. */
export interface CallerProvidersDeps {
  catalog: Catalog;
  lists: ProviderLists;
  userCredentials: UserCredentials;
  tokenExchange: () => TokenExchange;
}

/** Why a caller acting for no user (an agent alone) has no list of a per-user provider. */
export const NO_USER: NeedsAuth = {
  reason: 'This provider answers as the user: the caller acts for no user',
  authUrl: null,
};

/**
 * A provider as this caller sees it: their routing set and what of it they may reach, each
 * provider's lists (the shared one, or for a provider that answers each user with their own
 * credential the caller's own, from the one cache), whether a tool is listed for them, and their
 * auth for it (`CallerAuth`, the one answer lists, calls and other forwarded methods read). With
 * `shared-view.ts`, the one place that asks whether a provider is per-user on the MCP path.
 */
export class CallerProviders {
  constructor(private readonly deps: CallerProvidersDeps) {}

  /** The caller's routing set (a `providers=` filter narrows it). */
  routingSet(principal: Principal, providerFilter: readonly string[] | null): Promise<ProviderRecord[]> {
    return routingSet(this.deps.catalog, principal, providerFilter);
  }

  /** The providers of `providers` the caller may reach. */
  async reachable(principal: Principal, providers: ProviderRecord[]): Promise<ProviderRecord[]> {
    const allowed = await Promise.all(providers.map((p) => mayReach(this.deps.catalog, principal, p.id)));
    return providers.filter((_, i) => allowed[i]);
  }

  /** The caller's own auth for the provider: none for a shared-auth provider (no lookup), their headers, or why they have none. */
  auth(provider: ProviderRecord, caller: Pick<Caller, 'principal' | 'headers'>): Promise<CallerAuth> {
    return callerAuthOf(
      {
        userCredentials: this.deps.userCredentials,
        exchange: this.deps.tokenExchange,
        clientSecret: (p) => this.deps.catalog.providers.authSecret(p),
      },
      provider,
      caller.principal,
      caller.headers,
    );
  }

  /** The provider's list of one kind as the caller sees it (fetched for `capabilities`: servers may offer a capable client more). */
  list(
    provider: ProviderRecord,
    caller: Pick<Caller, 'principal' | 'headers'>,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>> = NO_CLIENT_CAPABILITIES,
  ): Promise<ProviderList> {
    const lister = this.listerOf(provider, caller);
    if (lister === null) return Promise.resolve(noUserList(kind));
    return this.deps.lists.get(provider, lister, kind, capabilities);
  }

  /** The provider's tool list as the caller sees it, as the upstream gave it (empty when it cannot be had). */
  async toolItems(provider: ProviderRecord, caller: Caller): Promise<ListItem[]> {
    return (await this.list(provider, caller, 'tools', caller.clientCapabilities)).items ?? [];
  }

  /** Whether the caller must connect (or act as a user) before this per-user provider lists anything for them. */
  async mustConnect(provider: ProviderRecord, caller: Caller): Promise<boolean> {
    return (
      listsPerUser(provider) &&
      (await this.list(provider, caller, 'tools', caller.clientCapabilities)).needsAuth !== null
    );
  }

  /** Whether the caller's tool list of the provider has `name`, for tools/call (`ProviderLists.listed`). */
  listed(provider: ProviderRecord, caller: Caller, name: string): Promise<ListerToolListing> {
    const lister = this.listerOf(provider, caller);
    if (lister === null) return Promise.resolve({ kind: 'needs_auth', needsAuth: NO_USER });
    return this.deps.lists.listed(provider, lister, name, caller.clientCapabilities);
  }

  /** Forgets the caller's own lists of a per-user provider (they connected since); false when there are none to forget. */
  forgetCallerLists(provider: ProviderRecord, principal: Principal): boolean {
    const user = listsPerUser(provider) ? listingUserOf(provider, principal) : null;
    if (user === null) return false;
    this.deps.lists.dropUser(user);
    return true;
  }

  /** The tool list a call of the caller's was just checked against (`listed`): theirs for a per-user provider. */
  cachedTools(
    provider: ProviderRecord,
    principal: Principal,
    capabilities: Readonly<Record<string, unknown>>,
  ): ListItem[] {
    if (!listsPerUser(provider)) return this.deps.lists.cachedTools(provider.id, null, capabilities);
    const user = listingUserOf(provider, principal);
    return user === null ? [] : this.deps.lists.cachedTools(provider.id, user, capabilities);
  }

  /** Whose list the caller reads: the shared one, theirs, or none (a per-user provider and a caller acting for no user). */
  private listerOf(provider: ProviderRecord, caller: Pick<Caller, 'principal' | 'headers'>): Lister | null {
    const base = this.sharedTarget(provider);
    if (!listsPerUser(provider)) return sharedLister(base);
    const user = listingUserOf(provider, caller.principal);
    if (user === null) return null;
    return { user, authOf: async () => listAuthOf(await this.auth(provider, caller), base, user) };
  }

  /** The provider's own target, no caller: what its shared lists are fetched from. */
  private sharedTarget(provider: ProviderRecord): UpstreamTarget {
    return upstreamTarget(provider, this.deps.catalog.providers.authSecret(provider), null);
  }
}

/** The list of a per-user provider for a caller acting for no user: none, and why. */
const noUserList = (kind: ListKind): ProviderList => ({
  items: kind === 'tools' ? null : [],
  failure: NO_USER.reason,
  refusal: null,
  needsAuth: NO_USER,
});

/**
 * The target a per-user provider is asked for the user's lists with: its own target with the
 * headers a call of theirs carries and an upstream session of that user's alone (so no session
 * carries two users' tokens); or why they have none, with the connect URL when connecting helps.
 */
export function listAuthOf(auth: CallerAuth, base: UpstreamTarget, user: string): ListAuth {
  if (auth.kind === 'headers')
    return {
      kind: 'target',
      target: {
        ...base,
        headers: { ...base.headers, ...auth.headers },
        principal: JSON.stringify(['user-lists', user]),
      },
    };
  if (auth.kind === 'none') return { kind: 'target', target: base };
  const { refusal } = auth;
  switch (refusal.kind) {
    case 'missing':
      return {
        kind: 'needs_auth',
        reason: `Connect ${refusal.serviceType} first: this provider lists its tools for your own ${refusal.serviceType} account`,
        authUrl: refusal.authUrl || null,
      };
    case 'no_user':
      return {
        kind: 'needs_auth',
        reason: `This provider answers as the user (${refusal.serviceType}): the caller acts for no user`,
        authUrl: null,
      };
    case 'exchange':
      return { kind: 'needs_auth', reason: refusal.reason, authUrl: null };
    case 'unconfigured':
      return {
        kind: 'needs_auth',
        reason:
          refusal.missing === 'token_exchange_settings'
            ? 'The provider has no token exchange settings'
            : 'The provider names no credential service type',
        authUrl: null,
      };
  }
}
