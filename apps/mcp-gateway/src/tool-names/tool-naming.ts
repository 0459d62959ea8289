import { tenantScope, type Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { matchGlob, resolveProvider } from '@agentgw/core';
import type { ListItem } from '../provider-view/list-items.js';
import { toolKey, type OfferedTool, type ScopeNames } from './exposed-name-rule.js';
import type { ExposedNames } from './exposed-names.js';
import type { OfferedItem, OfferedToolsOf } from './offered-tools.js';

/** A tool on the unified endpoint: the name it is exposed under, and the provider and upstream name a call of it goes to. */
export interface ExposedTool {
  exposedName: string;
  provider: ProviderRecord;
  upstreamName: string;
  /** The upstream's definition, unchanged (its `name` is the upstream's). */
  tool: ListItem;
}

/** Where a call of an exposed name goes. */
export interface ResolvedTool {
  provider: ProviderRecord;
  upstreamName: string;
}

/** Each provider with the tools it offers, in the caller's routing order. */
export type OfferedLists = readonly { provider: ProviderRecord; tools: readonly OfferedItem[] }[];

/** The scope names are kept in: the tenant a call acts in (`tenantScope`), '' for none. */
export const nameScope = (principal: Principal): string => tenantScope(principal) ?? '';

/**
 * Exposed names on the unified endpoint: `expose` names what tools/list shows, `resolveExposedName`
 * turns a tools/call name back into (provider, upstream name). Policy, audit, confirmations and
 * the tool gate only ever see the provider and the upstream name.
 */
export class ToolNaming {
  constructor(private readonly names: ExposedNames) {}

  /** Every offered tool under its exposed name (new tools are named first), sorted by exposed name: the same order whichever upstream answers first. */
  async expose(scope: string, lists: OfferedLists): Promise<ExposedTool[]> {
    const names = await this.names.name(scope, offeredTools(lists));
    const exposed: ExposedTool[] = [];
    for (const { provider, tools } of lists) {
      for (const { upstreamName, tool } of tools) {
        const exposedName = names.byTool.get(toolKey(provider.id, upstreamName));
        if (exposedName !== undefined) exposed.push({ exposedName, provider, upstreamName, tool });
      }
    }
    return exposed.sort((a, b) => (a.exposedName < b.exposedName ? -1 : a.exposedName > b.exposedName ? 1 : 0));
  }

  /**
   * Where a call of `exposedName` goes among `providers` (the caller's routing set), or null: no
   * such name here, or its provider is outside the set or no longer claims the tool by its
   * pattern. A name this process has not seen names what the providers offer first (so a
   * client may call without listing, and another replica's names are read). A name still
   * unknown goes to the provider whose pattern claims it among those whose list cannot be had
   * now, under that name: the call is then refused as unavailable (502, egress 403) when its
   * listing is checked, never forwarded unchecked.
   */
  async resolveExposedName(
    scope: string,
    providers: readonly ProviderRecord[],
    exposedName: string,
    offeredOf: OfferedToolsOf,
  ): Promise<ResolvedTool | null> {
    const cached = await this.names.cached(scope);
    if (cached.byExposed.has(exposedName)) return resolveIn(cached, providers, exposedName);
    const lists = await Promise.all(
      providers.map(async (provider) => ({ provider, tools: await offeredOf(provider) })),
    );
    const listed = lists.flatMap(({ provider, tools }) => (tools === null ? [] : [{ provider, tools }]));
    const resolved = resolveIn(await this.names.name(scope, offeredTools(listed)), providers, exposedName);
    if (resolved !== null) return resolved;
    const claimant = resolveProvider(
      lists.filter((l) => l.tools === null).map((l) => l.provider),
      exposedName,
    );
    return claimant && { provider: claimant, upstreamName: exposedName };
  }
}

const offeredTools = (lists: OfferedLists): OfferedTool[] =>
  lists.flatMap(({ provider, tools }) => tools.map(({ upstreamName }) => ({ provider, upstreamName })));

function resolveIn(names: ScopeNames, providers: readonly ProviderRecord[], exposedName: string): ResolvedTool | null {
  const owner = names.byExposed.get(exposedName);
  const provider = owner && providers.find((p) => p.id === owner.providerId);
  return owner && provider && matchGlob(provider.pattern, owner.upstreamName)
    ? { provider, upstreamName: owner.upstreamName }
    : null;
}
