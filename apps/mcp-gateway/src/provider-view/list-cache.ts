import { RecencyMap } from '@agentgw/core';
import { clientCapabilitiesKey } from '@agentgw/mcp-client';
import type { ListKind, ProviderList } from './list-items.js';

/** One cached list: what was fetched, when, and whose list of which provider and kind it is. */
export interface ListEntry extends ProviderList {
  at: number;
  /** The tool names of a tools list, for the per-call check. */
  names: ReadonlySet<unknown> | null;
  providerId: string;
  kind: ListKind;
  user: string | null;
}

/**
 * The cache key of a provider's list of one kind for one lister (the shared list, or a user's
 * own), fetched for clients of one capability set: servers may offer a capable client more (a
 * tool that samples). JSON, so no id can forge another's key.
 */
export const listKey = (
  providerId: string,
  user: string | null,
  kind: ListKind,
  capabilities: Readonly<Record<string, unknown>>,
): string => JSON.stringify([providerId, user, kind, clientCapabilitiesKey(capabilities)]);

/** The store behind the one list cache: entries by `listKey`, least recently used dropped first past the bound. */
export class ListCache {
  private readonly entries: RecencyMap<string, ListEntry>;

  constructor(maxEntries: number) {
    this.entries = new RecencyMap(maxEntries);
  }

  /** How many lists are held. */
  get size(): number {
    return this.entries.size;
  }

  /** The entry as it is, without marking it used. */
  peek(key: string): ListEntry | undefined {
    return this.entries.peek(key);
  }

  /** The entry, marked most recently used. */
  touch(key: string): ListEntry | undefined {
    return this.entries.get(key);
  }

  /** Stores the entry as most recently used, dropping the least recently used past the bound. */
  put(key: string, entry: ListEntry): void {
    this.entries.set(key, entry);
  }

  /** Forgets every lister's lists of a provider (all providers with null), of one kind when given. */
  drop(providerId: string | null, kind?: ListKind): void {
    this.entries.deleteWhere(
      (entry) =>
        (providerId === null || entry.providerId === providerId) && (kind === undefined || entry.kind === kind),
    );
  }

  /** Forgets a user's lists. */
  dropUser(user: string): void {
    this.entries.deleteWhere((entry) => entry.user === user);
  }
}
