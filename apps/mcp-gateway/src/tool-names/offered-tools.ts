import type { ProviderRecord } from '@agentgw/catalog';
import { matchGlob, toolNameProblem } from '@agentgw/core';
import type { UpstreamTarget } from '@agentgw/mcp-client';
import type { ListItem, ProviderLists } from '../provider-lists.js';

/** One tool a provider lists, with the upstream name a call of it is sent under. */
export interface OfferedItem {
  upstreamName: string;
  tool: ListItem;
}

/** A provider's tools the unified endpoint may expose; empty when its list cannot be had (it is left out of that answer). */
export type OfferedToolsOf = (provider: ProviderRecord) => Promise<OfferedItem[]>;

/**
 * Reads a provider's cached tool list: each tool once (the first of a repeated name), only names
 * tools/call accepts (`toolNameProblem`) and the provider's pattern matches.
 */
export function offeredToolsOf(lists: ProviderLists, listTarget: (provider: ProviderRecord) => UpstreamTarget): OfferedToolsOf {
  return async (provider) => {
    const list = await lists.get(provider, listTarget(provider), 'tools');
    const seen = new Set<string>();
    const offered: OfferedItem[] = [];
    for (const tool of list.items ?? []) {
      const name = tool.name;
      if (typeof name !== 'string' || toolNameProblem(name) !== null || seen.has(name) || !matchGlob(provider.pattern, name)) continue;
      seen.add(name);
      offered.push({ upstreamName: name, tool });
    }
    return offered;
  };
}
