import type { ProviderRecord } from '@agentgw/catalog';
import { egressRefusalOf, type Logger } from '@agentgw/core';
import type { McpUpstreamClient, UpstreamSession, UpstreamTarget } from '@agentgw/mcp-client';
import type { ListEntry } from './list-cache.js';
import { LIST_METHODS, type ListAuth, type Lister, type ListKind } from './list-items.js';

/** A fetched list, before the cache stamps it with its time and owner. */
export type FetchedList = Omit<ListEntry, 'at' | 'providerId' | 'kind' | 'user'>;

/** What one list fetch needs: the upstream client, a logger, the deadline and where upstream notifications go. */
export interface ListFetchDeps {
  client: McpUpstreamClient;
  logger: Logger;
  timeoutMs: number;
  /** Told of every notification an upstream sends on an answer. */
  noticed: (providerId: string, method: string) => void;
}

/**
 * The lister's list as fetched with their auth, or why there is none (no auth, or it could not be
 * read); `opened` is told of the upstream session when the fetch was made for the shared list.
 */
export async function fetchList(
  deps: ListFetchDeps,
  provider: ProviderRecord,
  lister: Lister,
  kind: ListKind,
  capabilities: Readonly<Record<string, unknown>>,
  opened: ((target: UpstreamTarget, session: UpstreamSession) => void) | undefined,
): Promise<FetchedList> {
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
  const { target } = auth;
  const onOpen = opened && ((session: UpstreamSession) => opened(target, session));
  return { ...(await load(deps, provider, target, kind, capabilities, onOpen)), needsAuth: null };
}

/** Asks the upstream for one list (all pages, within the deadline); a failure is an answer too, never thrown. */
async function load(
  deps: ListFetchDeps,
  provider: ProviderRecord,
  target: UpstreamTarget,
  kind: ListKind,
  capabilities: Readonly<Record<string, unknown>>,
  opened: ((session: UpstreamSession) => void) | undefined,
): Promise<Omit<FetchedList, 'needsAuth'>> {
  try {
    const { items, session } = await deps.client.listAll(target, LIST_METHODS[kind], kind, {
      timeoutMs: deps.timeoutMs,
      clientCapabilities: capabilities,
      onNotification: (n) => deps.noticed(provider.id, n.method),
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
    if (kind === 'tools') deps.logger.warn({ providerId: provider.id, kind, reason }, 'upstream list unavailable');
    return {
      items: kind === 'tools' ? null : [],
      names: null,
      failure: reason,
      refusal: egressRefusalOf(err) ?? null,
    };
  }
}
