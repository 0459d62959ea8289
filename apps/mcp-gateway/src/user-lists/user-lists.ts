import type { ProviderRecord } from '@agentgw/catalog';
import type { Clock, EgressRefusedError } from '@agentgw/core';
import { clientCapabilitiesKey, type UpstreamTarget } from '@agentgw/mcp-client';
import type { ListItem, ListKind, ToolListing } from '../list-items.js';

/** How a per-user list is asked for: the target carrying the user's own auth, or why the user has none (resolved only when a list must be fetched). */
export type UserListAuth =
  { kind: 'target'; target: UpstreamTarget } | { kind: 'needs_auth'; reason: string; authUrl: string | null };

/** What the user must do before this provider lists anything for them: the reason, and where to connect (null: connecting cannot help). */
export interface NeedsAuth {
  reason: string;
  authUrl: string | null;
}

/** One user's list of one provider and kind, as fetched (or why there is none). */
export interface UserList {
  items: ListItem[] | null;
  failure: string | null;
  refusal: EgressRefusedError | null;
  /** Set when there is no list because the user has no usable credential for the provider. */
  needsAuth: NeedsAuth | null;
}

/** A fetched list, built by the shared lists' fetch (same deadline, parsing and failure rules). */
export interface FetchedList {
  items: ListItem[] | null;
  names: ReadonlySet<unknown> | null;
  failure: string | null;
  refusal: EgressRefusedError | null;
}

interface Entry extends UserList {
  at: number;
  names: ReadonlySet<unknown> | null;
  providerId: string;
  kind: ListKind;
  user: string;
}

/** How long lists are kept: the shared lists' own durations, so both behave alike. */
export interface UserListTimes {
  listTtlMs: number;
  failureTtlMs: number;
  unlistedRefetchMs: number;
}

/** Per-user entries kept at most (least recently used dropped first): users × per-user providers × kinds × capability sets is unbounded. */
const DEFAULT_MAX_ENTRIES = 10_000;

/** A tool listing of a per-user provider: as the shared one, plus why it is unavailable when the user must connect first. */
export type UserToolListing = ToolListing | { kind: 'needs_auth'; needsAuth: NeedsAuth };

/**
 * The lists of providers that answer each user with their own credential (user_oauth, user_key,
 * mcp_oauth, token_exchange): a protected MCP server answers nothing without the user's token and
 * may list different tools per user. Cached per (provider, user, kind, client capability set),
 * LRU-bounded, with the shared lists' TTLs; dropped per provider (providers.changed, an upstream's
 * list_changed) and per user (credential.changed). No server stream is held per user: their
 * list changes arrive on answers or after the TTL.
 */
export class UserLists {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry>>();

  constructor(
    private readonly deps: {
      clock: Clock;
      fetch: (
        provider: ProviderRecord,
        target: UpstreamTarget,
        kind: ListKind,
        capabilities: Readonly<Record<string, unknown>>,
      ) => Promise<FetchedList>;
    },
    private readonly times: UserListTimes,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
  ) {}

  /** The user's list of the provider (fresh within the TTL), fetched with their auth when not; never throws. */
  async get(
    provider: ProviderRecord,
    user: string,
    authOf: () => Promise<UserListAuth>,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<UserList> {
    const key = userListKey(provider.id, user, kind, capabilities);
    const cached = this.touch(key);
    if (cached && this.age(cached) < (cached.failure === null ? this.times.listTtlMs : this.times.failureTtlMs))
      return cached;
    return this.fetchOnce(key, provider, user, authOf, kind, capabilities);
  }

  /** Whether the user's list of the provider has `name`, for tools/call: the shared lists' rules (ProviderLists.listed), per user. */
  async listed(
    provider: ProviderRecord,
    user: string,
    authOf: () => Promise<UserListAuth>,
    name: string,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<UserToolListing> {
    const key = userListKey(provider.id, user, 'tools', capabilities);
    const cached = this.touch(key);
    const age = cached ? this.age(cached) : Infinity;
    if (cached?.names) {
      if (cached.names.has(name)) {
        if (age >= this.times.listTtlMs) void this.fetchOnce(key, provider, user, authOf, 'tools', capabilities);
        return { kind: 'listed' };
      }
      if (age < this.times.unlistedRefetchMs) return { kind: 'unlisted' };
    }
    const entry =
      cached && cached.names === null && age < this.times.failureTtlMs
        ? cached
        : await this.fetchOnce(key, provider, user, authOf, 'tools', capabilities);
    if (entry.needsAuth) return { kind: 'needs_auth', needsAuth: entry.needsAuth };
    if (entry.names === null)
      return { kind: 'unavailable', failure: entry.failure ?? 'no tool list', refusal: entry.refusal };
    return entry.names.has(name) ? { kind: 'listed' } : { kind: 'unlisted' };
  }

  /** The user's cached tool list as it is (empty when there is none): what their call was just checked against. */
  cachedTools(providerId: string, user: string, capabilities: Readonly<Record<string, unknown>>): ListItem[] {
    return this.entries.get(userListKey(providerId, user, 'tools', capabilities))?.items ?? [];
  }

  /** Forgets every user's lists of a provider (all providers with null), of one kind when given. */
  dropProvider(providerId: string | null, kind?: ListKind): void {
    for (const [key, entry] of [...this.entries]) {
      if ((providerId === null || entry.providerId === providerId) && (kind === undefined || entry.kind === kind))
        this.entries.delete(key);
    }
  }

  /** Forgets a user's lists (their credentials changed: connected, replaced, deleted). */
  dropUser(user: string): void {
    for (const [key, entry] of [...this.entries]) if (entry.user === user) this.entries.delete(key);
  }

  /** How many lists are cached (for the bound's test). */
  get size(): number {
    return this.entries.size;
  }

  /** The cached entry, marked most recently used. */
  private touch(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  private age(entry: Entry): number {
    return this.deps.clock.now().getTime() - entry.at;
  }

  private fetchOnce(
    key: string,
    provider: ProviderRecord,
    user: string,
    authOf: () => Promise<UserListAuth>,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<Entry> {
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetch(key, provider, user, authOf, kind, capabilities).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private async fetch(
    key: string,
    provider: ProviderRecord,
    user: string,
    authOf: () => Promise<UserListAuth>,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<Entry> {
    const none = { items: kind === 'tools' ? null : [], names: null, refusal: null };
    let list: FetchedList & { needsAuth: NeedsAuth | null };
    try {
      const auth = await authOf();
      if (auth.kind === 'needs_auth')
        list = { ...none, failure: auth.reason, needsAuth: { reason: auth.reason, authUrl: auth.authUrl } };
      else list = { ...(await this.deps.fetch(provider, auth.target, kind, capabilities)), needsAuth: null };
    } catch (err) {
      // The credential could not be read (the vault is down): no list now, asked again after the failure TTL.
      list = {
        ...none,
        failure: err instanceof Error ? err.message : 'the credential could not be read',
        needsAuth: null,
      };
    }
    const entry: Entry = { ...list, at: this.deps.clock.now().getTime(), providerId: provider.id, kind, user };
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return entry;
  }
}

/** The cache key of one user's list; JSON, so no id can forge another's key. */
const userListKey = (
  providerId: string,
  user: string,
  kind: ListKind,
  capabilities: Readonly<Record<string, unknown>>,
): string => JSON.stringify([providerId, user, kind, clientCapabilitiesKey(capabilities)]);
