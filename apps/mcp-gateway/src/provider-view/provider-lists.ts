import type { ProviderRecord } from '@agentgw/catalog';
import { egressRefusalOf, type Clock, type EventBus, type Logger, type Unsubscribe } from '@agentgw/core';
import {
  clientCapabilitiesKey,
  NO_CLIENT_CAPABILITIES,
  type McpUpstreamClient,
  type UpstreamSession,
  type UpstreamTarget,
} from '@agentgw/mcp-client';
import {
  LIST_METHODS,
  type ListAuth,
  type Lister,
  type ListerToolListing,
  type ListItem,
  type ListKind,
  type ProviderList,
} from './list-items.js';

/** How long a fetched list is served without asking again (events and list_changed drop it sooner). */
const LIST_TTL_MS = 60_000;
/** A failed fetch is not retried for this long, so a dead upstream does not cost every list a timeout. */
const FAILURE_TTL_MS = 5_000;
/** A call of a name the cached list lacks fetches the list again at most this often (a tool added upstream shows up within it). */
const UNLISTED_REFETCH_MS = 5_000;
/** Lists kept at most (least recently used dropped first): users × per-user providers × kinds × capability sets is unbounded. */
const DEFAULT_MAX_ENTRIES = 10_000;

interface Entry extends ProviderList {
  at: number;
  /** The tool names of a tools list, for the per-call check. */
  names: ReadonlySet<unknown> | null;
  providerId: string;
  kind: ListKind;
  user: string | null;
}

/** The shared list's lister: the provider's own target, no user. */
export const sharedLister = (target: UpstreamTarget): Lister => ({
  user: null,
  authOf: () => Promise.resolve({ kind: 'target', target }),
});

/**
 * The cache key of a provider's list of one kind for one lister (the shared list, or a user's
 * own), fetched for clients of one capability set: servers may offer a capable client more (a
 * tool that samples). JSON, so no id can forge another's key.
 */
const listKey = (
  providerId: string,
  user: string | null,
  kind: ListKind,
  capabilities: Readonly<Record<string, unknown>>,
): string => JSON.stringify([providerId, user, kind, clientCapabilitiesKey(capabilities)]);

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
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry>>();
  /** Upstream server streams held open per provider (session upstreams announce list changes there). */
  private readonly listeners = new Map<string, AbortController>();
  private unsubscribe: Unsubscribe | null = null;
  /** Told (after the cached lists are dropped) when an upstream announces its tools changed. */
  private readonly toolChanges = new Set<(providerId: string) => void>();
  private unsubscribeCredentials: Unsubscribe | null = null;

  constructor(
    private readonly deps: { client: McpUpstreamClient; clock: Clock; bus: EventBus; logger: Logger },
    private readonly timeoutMs: number,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
  ) {}

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
    const cached = this.touch(key);
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
    const cached = this.touch(key);
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
    return this.entries.get(listKey(providerId, user, 'tools', capabilities))?.items ?? [];
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

  /** Fetches the list, or joins the fetch already under way; the cached entry is replaced when it ends. */
  private fetchOnce(
    key: string,
    provider: ProviderRecord,
    lister: Lister,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<Entry> {
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
  ): Promise<Entry> {
    const list = await this.listFor(provider, lister, kind, capabilities);
    const entry: Entry = {
      ...list,
      at: this.deps.clock.now().getTime(),
      providerId: provider.id,
      kind,
      user: lister.user,
    };
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return entry;
  }

  /** The lister's list as fetched with their auth, or why there is none (no auth, or it could not be read). */
  private async listFor(
    provider: ProviderRecord,
    lister: Lister,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<Omit<Entry, 'at' | 'providerId' | 'kind' | 'user'>> {
    const none = { items: kind === 'tools' ? null : [], names: null, refusal: null };
    let auth: ListAuth;
    try {
      auth = await lister.authOf();
    } catch (err) {
      // The credential could not be read (the vault is down): no list now, asked again after the failure TTL.
      return {
        ...none,
        failure: err instanceof Error ? err.message : 'the credential could not be read',
        needsAuth: null,
      };
    }
    if (auth.kind === 'needs_auth')
      return { ...none, failure: auth.reason, needsAuth: { reason: auth.reason, authUrl: auth.authUrl } };
    // Only the shared list listens on the upstream's server stream (no stream is held per user).
    const opened =
      lister.user === null ? (session: UpstreamSession) => this.listen(provider, auth.target, session) : undefined;
    return { ...(await this.load(provider, auth.target, kind, capabilities, opened)), needsAuth: null };
  }

  /** Asks the upstream for one list (all pages, within the deadline); a failure is an answer too, never thrown. */
  private async load(
    provider: ProviderRecord,
    target: UpstreamTarget,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
    opened: ((session: UpstreamSession) => void) | undefined,
  ): Promise<Omit<Entry, 'at' | 'providerId' | 'kind' | 'user' | 'needsAuth'>> {
    try {
      const { items, session } = await this.deps.client.listAll(target, LIST_METHODS[kind], kind, {
        timeoutMs: this.timeoutMs,
        clientCapabilities: capabilities,
        onNotification: (n) => this.noticed(provider.id, n.method),
      });
      opened?.(session);
      return {
        items,
        names: kind === 'tools' ? new Set(items.map((item) => item.name)) : null,
        failure: null,
        refusal: null,
      };
    } catch (err) {
      const reason = err instanceof Error ? err.message : 'unknown failure';
      // Tools are what providers are for; a provider without resources or prompts simply has none.
      if (kind === 'tools')
        this.deps.logger.warn({ providerId: provider.id, kind, reason }, 'upstream list unavailable');
      return {
        items: kind === 'tools' ? null : [],
        names: null,
        failure: reason,
        refusal: egressRefusalOf(err) ?? null,
      };
    }
  }

  /**
   * Holds the upstream's server stream open (session upstreams send `list_changed` there, not on
   * answers). When a stream that was open ends, the provider's lists are dropped (a change may
   * have been missed) and the next fetch listens again; an upstream without one relies on the TTL.
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
        this.drop(provider.id);
      });
  }
}
