import type { ProviderRecord } from '@agentgw/catalog';
import {
  egressRefusalOf,
  type Clock,
  type EgressRefusedError,
  type EventBus,
  type Logger,
  type Unsubscribe,
} from '@agentgw/core';
import {
  clientCapabilitiesKey,
  NO_CLIENT_CAPABILITIES,
  type McpUpstreamClient,
  type UpstreamSession,
  type UpstreamTarget,
} from '@agentgw/mcp-client';
import { LIST_METHODS, type ListItem, type ListKind, type ToolListing } from './list-items.js';
import { UserLists, type FetchedList } from './user-lists/user-lists.js';

/** How long a fetched list is served without asking again (events and list_changed drop it sooner). */
const LIST_TTL_MS = 60_000;
/** A failed fetch is not retried for this long, so a dead upstream does not cost every list a timeout. */
const FAILURE_TTL_MS = 5_000;
/** A call of a name the cached list lacks fetches the list again at most this often (a tool added upstream shows up within it). */
const UNLISTED_REFETCH_MS = 5_000;

interface Entry {
  at: number;
  items: ListItem[] | null;
  /** The tool names of a tools list, for the per-call check. */
  names: ReadonlySet<unknown> | null;
  failure: string | null;
  /** Set when the egress policy refused the upstream's address (the proxy answers 403, not 502). */
  refusal: EgressRefusedError | null;
}

/**
 * The cache key of a provider's list of one kind, fetched for clients of one capability set:
 * servers may offer a capable client more (a tool that samples). Capability sets are the few
 * canonical ones `relayableCapabilities` yields, so the cache stays bounded by providers × kinds × sets.
 */
const listKey = (providerId: string, kind: ListKind, capabilities: Readonly<Record<string, unknown>>): string => {
  const set = clientCapabilitiesKey(capabilities);
  return set === '' ? `${providerId}\n${kind}` : `${providerId}\n${kind}\n${set}`;
};

/**
 * Each provider's upstream lists, fetched with a deadline and cached per provider, kind and client capability set.
 * Dropped on `providers.changed` (that provider, or all), on an upstream's
 * `notifications/<kind>/list_changed`, and after a minute at most.
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
  /** The lists of providers that list per user (their own credential): fetched the same way, cached apart (user-lists/). */
  readonly users: UserLists;

  constructor(
    private readonly deps: { client: McpUpstreamClient; clock: Clock; bus: EventBus; logger: Logger },
    private readonly timeoutMs: number,
  ) {
    this.users = new UserLists(
      {
        clock: deps.clock,
        fetch: (provider, target, kind, capabilities) => this.load(provider, target, kind, capabilities),
      },
      { listTtlMs: LIST_TTL_MS, failureTtlMs: FAILURE_TTL_MS, unlistedRefetchMs: UNLISTED_REFETCH_MS },
    );
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.deps.bus.subscribe('providers.changed', ({ providerId }) => this.changed(providerId));
    // A user who connected (or whose credential was replaced or deleted) is listed anew at once.
    this.unsubscribeCredentials = await this.deps.bus.subscribe('credential.changed', ({ userId }) =>
      this.users.dropUser(userId),
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
    this.users.dropProvider(providerId);
  }

  /** Forgets a provider's lists (all providers with null). */
  drop(providerId: string | null, kind?: ListKind): void {
    for (const key of [...this.entries.keys()]) {
      const [id, k] = key.split('\n');
      if ((providerId === null || id === providerId) && (kind === undefined || k === kind)) this.entries.delete(key);
    }
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
      this.users.dropProvider(providerId, 'tools');
      for (const listener of this.toolChanges) listener(providerId);
    } else if (method === 'notifications/prompts/list_changed') {
      this.drop(providerId, 'prompts');
      this.users.dropProvider(providerId, 'prompts');
    } else if (method === 'notifications/resources/list_changed') {
      this.drop(providerId, 'resources');
      this.drop(providerId, 'resourceTemplates');
      this.users.dropProvider(providerId, 'resources');
      this.users.dropProvider(providerId, 'resourceTemplates');
    }
  }

  /** The provider's list (as it shows it to clients with `capabilities`), or a failure reason; never throws and never waits longer than the deadline. */
  async get(
    provider: ProviderRecord,
    target: UpstreamTarget,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>> = NO_CLIENT_CAPABILITIES,
  ): Promise<Omit<Entry, 'at' | 'names'>> {
    const cached = this.entries.get(listKey(provider.id, kind, capabilities));
    if (
      cached &&
      this.deps.clock.now().getTime() - cached.at < (cached.failure === null ? LIST_TTL_MS : FAILURE_TTL_MS)
    )
      return cached;
    return this.fetchOnce(provider, target, kind, capabilities);
  }

  /**
   * Whether the provider listed `name`, for tools/call, without an upstream round trip on the hot
   * path: a known name is answered from the cached list even past its TTL (refreshed behind the
   * call); the list is fetched while the call waits only when there is none yet, or the name is
   * missing from one older than UNLISTED_REFETCH_MS (so a new tool is callable within seconds
   * and made-up names cannot make every call refetch). `targetOf` is only called to fetch.
   */
  async listed(
    provider: ProviderRecord,
    targetOf: () => UpstreamTarget,
    name: string,
    capabilities: Readonly<Record<string, unknown>> = NO_CLIENT_CAPABILITIES,
  ): Promise<ToolListing> {
    const cached = this.entries.get(listKey(provider.id, 'tools', capabilities));
    const age = cached ? this.deps.clock.now().getTime() - cached.at : Infinity;
    if (cached?.names) {
      if (cached.names.has(name)) {
        if (age >= LIST_TTL_MS) void this.get(provider, targetOf(), 'tools', capabilities);
        return { kind: 'listed' };
      }
      if (age < UNLISTED_REFETCH_MS) return { kind: 'unlisted' };
    }
    // No list yet, a failure due for a retry, or a name an older list lacks: fetch (or join the fetch under way).
    const entry =
      cached && cached.names === null && age < FAILURE_TTL_MS
        ? cached
        : await this.fetchOnce(provider, targetOf(), 'tools', capabilities);
    if (entry.names === null)
      return { kind: 'unavailable', failure: entry.failure ?? 'no tool list', refusal: entry.refusal };
    return entry.names.has(name) ? { kind: 'listed' } : { kind: 'unlisted' };
  }

  /** The provider's cached tool list as it is (empty when there is none): what a call was just checked against (`listed`). */
  cachedTools(
    providerId: string,
    capabilities: Readonly<Record<string, unknown>> = NO_CLIENT_CAPABILITIES,
  ): ListItem[] {
    return this.entries.get(listKey(providerId, 'tools', capabilities))?.items ?? [];
  }

  /** Fetches the list, or joins the fetch already under way; the cached entry is replaced when it ends. */
  private fetchOnce(
    provider: ProviderRecord,
    target: UpstreamTarget,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<Entry> {
    const key = listKey(provider.id, kind, capabilities);
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetch(provider, target, kind, capabilities).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private async fetch(
    provider: ProviderRecord,
    target: UpstreamTarget,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
  ): Promise<Entry> {
    const entry = {
      ...(await this.load(provider, target, kind, capabilities, (session) => this.listen(provider, target, session))),
      at: this.deps.clock.now().getTime(),
    };
    this.entries.set(listKey(provider.id, kind, capabilities), entry);
    return entry;
  }

  /** Asks the upstream for one list (all pages, within the deadline); a failure is an answer too, never thrown. */
  private async load(
    provider: ProviderRecord,
    target: UpstreamTarget,
    kind: ListKind,
    capabilities: Readonly<Record<string, unknown>>,
    opened?: (session: UpstreamSession) => void,
  ): Promise<FetchedList> {
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
