import type { ProviderRecord } from '@agentgw/catalog';
import type { Logger } from '@agentgw/core';

/** A tool an upstream offers that the merged list leaves out, because tools/call for its name reaches another provider. */
export interface ShadowedTool {
  toolName: string;
  providerId: string;
  providerName: string;
  /** The provider calls for this name route to; null when no provider's pattern matches the name. */
  routedTo: { id: string; name: string } | null;
}

/**
 * Collisions seen while merging tool lists: each is logged once (an operator fixes patterns or
 * priorities), and the admin endpoint recomputes the full picture on demand.
 */
export class ShadowReport {
  private readonly logged = new Set<string>();

  constructor(private readonly logger: Logger) {}

  report(toolName: string, provider: ProviderRecord, owner: ProviderRecord | null): void {
    const key = `${provider.id}\n${toolName}\n${owner?.id ?? ''}`;
    if (this.logged.has(key)) return;
    if (this.logged.size > 10_000) this.logged.clear();
    this.logged.add(key);
    this.logger.warn(
      { toolName, providerId: provider.id, routedTo: owner?.id ?? null },
      owner ? 'tool shadowed: calls for this name route to another provider' : "tool unroutable: no provider's pattern matches its name",
    );
  }
}

/**
 * Every tool of the providers `principal` sees that the merged list cannot show as that
 * provider's, because its name routes elsewhere (or nowhere). Unreachable upstreams are skipped.
 */
export async function findShadowedTools(
  providers: readonly ProviderRecord[],
  toolsOf: (provider: ProviderRecord) => Promise<{ items: { name?: unknown }[] | null }>,
  route: (toolName: string, providers: readonly ProviderRecord[]) => ProviderRecord | null,
): Promise<ShadowedTool[]> {
  const lists = await Promise.all(providers.map(toolsOf));
  const shadowed: ShadowedTool[] = [];
  for (const [i, provider] of providers.entries()) {
    for (const tool of lists[i]!.items ?? []) {
      if (typeof tool.name !== 'string') continue;
      const owner = route(tool.name, providers);
      if (owner?.id === provider.id) continue;
      shadowed.push({ toolName: tool.name, providerId: provider.id, providerName: provider.name, routedTo: owner ? { id: owner.id, name: owner.name } : null });
    }
  }
  return shadowed;
}
