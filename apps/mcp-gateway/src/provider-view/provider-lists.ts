import type { ProviderRecord } from '@agentgw/catalog';
import { epochMs, type Clock, type EventBus, type Logger, type Unsubscribe } from '@agentgw/core';
import {
  NO_CLIENT_CAPABILITIES,
  type McpUpstreamClient,
  type UpstreamSession,
  type UpstreamTarget,
} from '@agentgw/mcp-client';
import { ListCache, listKey, type ListEntry } from './list-cache.js';
import { fetchList, type ListFetchDeps } from './list-fetch.js';
import type { Lister, ListerToolListing, ListItem, ListKind, ProviderList } from './list-items.js';

/** How long a fetched list is served without asking again (events and list_changed drop it sooner). */
const LIST_TTL_MS = 60_000;
/** A failed fetch is not retried for this long, so a dead upstream does not cost every list a timeout. */
const FAILURE_TTL_MS = 5_000;
/** A call of a name the cached list lacks fetches the list again at most this often (a tool added upstream shows up within it). */
const UNLISTED_REFETCH_MS = 5_000;
/** Lists kept at most (least recently used dropped first): users × per-user providers × kinds × capability sets is unbounded. */
const DEFAULT_MAX_ENTRIES = 10_000;

/** The shared list's lister: the provider's own target, no user. */
export const sharedLister = (target: UpstreamTarget): Lister => ({
  user: null,
  authOf: () => Promise.resolve({ kind: 'target', target }),
});

/**
 * The one cache of upstream lists: per provider, lister (shared, or the user of a provider that
 * answers each user with their own credential — a protected MCP server lists nothing without the
 * user's token and may list different tools per user), kind and client capability set; fetched
 * with a deadline, LRU-bounded. Dropped on `providers.changed` (that provider, or all), on an
 * upstream's `notifications/<kind>/list_changed`, per user on `credential.changed`, and after a
 * minute at most. Only the shared lists hold an upstream server stream open; a user's list
 * changes arrive on answers or after the TTL.
 */
export class ProviderLists {
  private readonly entries: ListCache;
  private readonly inflight = new Map<string, Promise<ListEntry>>();
  /** Upstream server streams held open per provider (session upstreams announce list changes there). */
  private readonly listeners = new Map<string, AbortController>();
  private unsubscribe: Unsubscribe | null = null;
  /** Told (after the cached lists are dropped) when an upstream announces its tools changed. */
  private readonly toolChanges = new Set<(providerId: string) => void>();
  private unsubscribeCredentials: Unsubscribe | null = null;
  private readonly fetchDeps: ListFetchDeps;

  constructor(
    private readonly deps: { client: McpUpstreamClient; clock: Clock; bus: EventBus; logger: Logger },
    timeoutMs: number,
    maxEntries = DEFAULT_MAX_ENTRIES,
  ) {
    this.entries = new ListCache(maxEntries);
    const noticed = (providerId: string, method: string): void => this.noticed(providerId, method);
    this.fetchDeps = { client: deps.client, logger: deps.logger, timeoutMs, noticed };
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.deps.bus.subscribe('providers.changed', ({ providerId }) => this.changed(providerId));
    // A user who connected (or whose credential was replaced or deleted) is listed anew at once.
    this.unsubscribeCredentials = await this.deps.bus.subscribe('credential.changed', ({ userId }) =>
      this.dropUser(userId),
    );
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
    this.unsubscribe = null;
    await this.unsubscribeCredentials?.();
    this.unsubscribeCredentials = null;
    for (const listener of this.listeners.values()) listener.abort();
    this.listeners.clear();
  }

  /** A provider changed (endpoint, auth, deleted): forget its lists and its server stream. */
  private changed(providerId: string | null): void {
    for (const [id, listener] of [...this.listeners]) {
      if (providerId === null || id === providerId) {
        this.listeners.delete(id);
        listener.abort();
      }
    }
    this.drop(providerId);
  }

  /** Forgets every lister's lists of a provider (all providers with null), of one kind when given. */
  drop(providerId: string | null, kind?: ListKind): void {
    this.entries.drop(providerId, kind);
  }

  /** Forgets a user's lists (their credentials changed: connected, replaced, deleted). */
  dropUser(user: string): void {
    this.entries.dropUser(user);
  }

  /** How many lists are cached (for the bound's test). */
  get size(): number {
    return this.entries.size;
  }

  /** Calls `listener` with a provider's id each time its upstream says its tools changed; returns the unsubscribe. */
  onUpstreamToolsChanged(listener: (providerId: string) => void): () => void {
    this.toolChanges.add(listener);
    return () => void this.toolChanges.delete(listener);
  }

  /** Reacts to a notification an upstream sent on any answer. */
  noticed(providerId: string, method: string): void {
    if (method === 'notifications/tools/list_changed') {
      this.drop(providerId, 'tools');
      for (const listener of this.toolChanges) listener(providerId);
    } else if (method === 'notifications/prompts/list_changed') {
      this.drop(providerId, 'prompts');
    } else if (method === 'notifications/resources/list_changed') {
      this.drop(providerId, 'resources');
      this.drop(providerId, 'resourceTemplates');
    }
  }

  /** The lister's list of the provider (as it shows it to clients with `capabilities`), or why there is none; never throws and never waits longer than the deadline. */
  async get(
    provider: ProviderRecord,
    lister: Lister,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>> = NO_CLIENT_CAPABILITIES,
  ): Promise<ProviderList> {
    const key = listKey(provider.id, lister.user, kind, capabilities);
    const cached = this.entries.touch(key);
    if (cached && this.age(cached) < (cached.failure === null ? LIST_TTL_MS : FAILURE_TTL_MS)) return cached;
    return this.fetchOnce(key, provider, lister, kind, capabilities);
  }

  /**
   * Whether the lister's list of the provider has `name`, for tools/call, without an upstream
   * round trip on the hot path: a known name is answered from the cached list even past its TTL
   * (refreshed behind the call); the list is fetched while the call waits only when there is none
   * yet, or the name is missing from one older than UNLISTED_REFETCH_MS (so a new tool is callable
   * within seconds and made-up names cannot make every call refetch). The lister's auth is only
   * read to fetch.
   */
  async listed(
    provider: ProviderRecord,
    lister: Lister,
    name: string,
    capabilities: Readonly<Record<string, unknown>> = NO_CLIENT_CAPABILITIES,
  ): Promise<ListerToolListing> {
    const key = listKey(provider.id, lister.user, 'tools', capabilities);
    const cached = this.entries.touch(key);
    const age = cached ? this.age(cached) : Infinity;
    if (cached?.names) {
      if (cached.names.has(name)) {
        if (age >= LIST_TTL_MS) void this.fetchOnce(key, provider, lister, 'tools', capabilities);
        return { kind: 'listed' };
      }
      if (age < UNLISTED_REFETCH_MS) return { kind: 'unlisted' };
    }
    // No list yet, a failure due for a retry, or a name an older list lacks: fetch (or join the fetch under way).
    const entry =
      cached && cached.names === null && age < FAILURE_TTL_MS
        ? cached
        : await this.fetchOnce(key, provider, lister, 'tools', capabilities);
    if (entry.needsAuth) return { kind: 'needs_auth', needsAuth: entry.needsAuth };
    if (entry.names === null)
      return { kind: 'unavailable', failure: entry.failure ?? 'no tool list', refusal: entry.refusal };
    return entry.names.has(name) ? { kind: 'listed' } : { kind: 'unlisted' };
  }

  /** The lister's cached tool list as it is (empty when there is none): what a call was just checked against (`listed`). */
  cachedTools(
    providerId: string,
    user: string | null,
    capabilities: Readonly<Record<string, unknown>> = NO_CLIENT_CAPABILITIES,
  ): ListItem[] {
    return this.entries.peek(listKey(providerId, user, 'tools', capabilities))?.items ?? [];
  }

  private age(entry: ListEntry): number {
    return epochMs(this.deps.clock) - entry.at;
  }

  /** Fetches the list, or joins the fetch already under way; the cached entry is replaced when it ends. */
  private fetchOnce(
    key: string,
    provider: ProviderRecord,
    lister: Lister,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<ListEntry> {
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetch(key, provider, lister, kind, capabilities).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private async fetch(
    key: string,
    provider: ProviderRecord,
    lister: Lister,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<ListEntry> {
    // Only the shared list listens on the upstream's server stream (no stream is held per user).
    const opened =
      lister.user === null
        ? (target: UpstreamTarget, session: UpstreamSession) => this.listen(provider, target, session)
        : undefined;
    const list = await fetchList(this.fetchDeps, provider, lister, kind, capabilities, opened);
    const entry: ListEntry = {
      ...list,
      at: this.deps.clock.now().getTime(),
      providerId: provider.id,
      kind,
      user: lister.user,
    };
    this.entries.put(key, entry);
    return entry;
  }

  /**
   * Holds the upstream's server stream open (session upstreams send `list_changed` there, not on
   * answers). When a stream that was open ends, the provider's lists are dropped (a change may
   * have been missed) and the next fetch listens again; one that failed to open is tried again at
   * the next fetch, the lists kept until their TTL; an upstream without one relies on the TTL.
   */
  private listen(provider: ProviderRecord, target: UpstreamTarget, session: UpstreamSession): void {
    if (session.sessionId === null || this.listeners.has(provider.id) || this.unsubscribe === null) return;
    const listener = new AbortController();
    this.listeners.set(provider.id, listener);
    void this.deps.client
      .listen(target, session, (n) => this.noticed(provider.id, n.method), listener.signal)
      .then((outcome) => {
        if (this.listeners.get(provider.id) !== listener || outcome === 'unsupported') return;
        this.listeners.delete(provider.id);
        if (outcome === 'ended') this.drop(provider.id);
      });
  }
}
