import type { Catalog } from '@agentgw/catalog';
import type { Logger } from '@agentgw/core';
import type { ProviderLists } from '../provider-view/provider-lists.js';
import { sharedToolList } from '../provider-view/shared-view.js';
import type { ToolPins } from './tool-pins.js';

/**
 * When an upstream announces that its tools changed, a provider whose definitions are pinned is
 * listed again at once and its pins applied, so a changed definition is quarantined (and every
 * connected client told `list_changed`) without waiting for a client to list. Every replica
 * listening to that upstream does so; the store lets one write win. A provider that lists per
 * user is not listed here (there is no user to list as, and it is never asked with shared or no
 * auth): its users' lists were dropped, and pins apply to each as it is listed again. Returns the unsubscribe.
 */
export function recheckPinsOnUpstreamChange(deps: {
  lists: ProviderLists;
  pins: ToolPins;
  catalog: Catalog;
  logger: Logger;
}): () => void {
  const { lists, pins, catalog, logger } = deps;
  const recheck = async (providerId: string): Promise<void> => {
    const provider = await catalog.providers.get(providerId);
    if (!provider || !(await pins.enabledFor(provider.id))) return;
    const list = await sharedToolList({ lists, authSecret: (p) => catalog.providers.authSecret(p) }, provider);
    if (list === null) return;
    if (list.items !== null) await pins.apply(provider, list.items);
  };
  return lists.onUpstreamToolsChanged((providerId) => {
    recheck(providerId).catch((err: unknown) =>
      logger.warn({ err, providerId }, 'tool pins not rechecked after an upstream list change'),
    );
  });
}
