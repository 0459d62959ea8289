import type { ProviderRecord } from '@agentgw/catalog';
import type { UpstreamTarget } from '@agentgw/mcp-client';
import { upstreamTarget } from '../upstream-targets.js';
import { listsPerUser } from './caller-providers.js';
import type { ProviderList } from './list-items.js';
import { sharedLister, type ProviderLists } from './provider-lists.js';

/**
 * The provider's target as no particular caller: its own auth (`secret` is read only for a shared
 * provider). Null for a provider that answers each user with their own credential: it is never
 * asked with shared or no auth, so whatever needs it must go as a user.
 */
export function sharedTargetOf(provider: ProviderRecord, secret: () => string | null): UpstreamTarget | null {
  return listsPerUser(provider) ? null : upstreamTarget(provider, secret(), null);
}

/** The provider's shared tool list from the one cache; null for a per-user provider, whose shared list its upstream never fills. */
export function sharedToolList(
  deps: { lists: ProviderLists; authSecret: (provider: ProviderRecord) => string | null },
  provider: ProviderRecord,
): Promise<ProviderList> | null {
  const target = sharedTargetOf(provider, () => deps.authSecret(provider));
  return target === null ? null : deps.lists.get(provider, sharedLister(target), 'tools');
}

/** Whether a call would reach a per-user provider without the user's own auth in `headers` (never sent: it would go as nobody). */
export const lacksUserAuth = (provider: ProviderRecord, carriesUserAuth: boolean): boolean =>
  listsPerUser(provider) && !carriesUserAuth;
