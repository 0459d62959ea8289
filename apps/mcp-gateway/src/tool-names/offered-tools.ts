import type { ProviderRecord } from '@agentgw/catalog';
import { matchGlob, toolNameProblem } from '@agentgw/core';
import type { ListItem } from '../provider-view/list-items.js';

/** One tool a provider lists, with the upstream name a call of it is sent under. */
export interface OfferedItem {
  upstreamName: string;
  tool: ListItem;
}

/** A provider's tools the unified endpoint may expose; null when its list cannot be had now. */
export type OfferedToolsOf = (provider: ProviderRecord) => Promise<OfferedItem[] | null>;

/**
 * The tools of a provider's list the unified endpoint may expose: each name once (the first of a
 * repeated one), only names tools/call accepts (`toolNameProblem`: no hidden characters, within
 * the glob cap) and the provider's pattern matches.
 */
export function offeredTools(provider: ProviderRecord, items: readonly ListItem[]): OfferedItem[] {
  const seen = new Set<string>();
  const offered: OfferedItem[] = [];
  for (const tool of items) {
    const name = tool.name;
    if (
      typeof name !== 'string' ||
      toolNameProblem(name) !== null ||
      seen.has(name) ||
      !matchGlob(provider.pattern, name)
    )
      continue;
    seen.add(name);
    offered.push({ upstreamName: name, tool });
  }
  return offered;
}

/** `offeredTools` of a fetched list, or null when the list could not be had (failed, refused). */
export const listedTools = (
  provider: ProviderRecord,
  list: { items: readonly ListItem[] | null },
): OfferedItem[] | null => (list.items === null ? null : offeredTools(provider, list.items));
