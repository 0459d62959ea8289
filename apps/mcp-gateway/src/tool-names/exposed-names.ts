import { RecencyMap, type EventBus, type Logger, type Unsubscribe } from '@agentgw/core';
import { assignNames, indexNames, toolKey, type OfferedTool, type ScopeNames } from './exposed-name-rule.js';
import type { ToolNameStore } from './tool-name-store.js';

/** Scopes whose names are kept in memory (least recently used dropped first). */
const MAX_CACHED_SCOPES = 1_000;
/** Tools one provider may have named in a scope: an upstream inventing names on every listing cannot grow the table without end. */
export const MAX_NAMES_PER_PROVIDER = 2_000;
/** Rounds of choose → store → reload when other replicas name the same tools at the same moment. */
const MAX_ROUNDS = 3;

/**
 * The exposed names of a scope's tools: read from the store (shared by every replica), cached per
 * scope in this process and dropped whole on `providers.changed` (a deleted provider's names go
 * with it, a changed prefix renames its tools). Names are only ever added otherwise, so a cached
 * scope can lack another replica's newest names but never hold a wrong one: a tool without a
 * cached name reloads the scope before any name is chosen for it.
 */
export class ExposedNames {
  private readonly scopes = new RecencyMap<string, Promise<ScopeNames>>(MAX_CACHED_SCOPES);
  private readonly overCap = new Set<string>();
  private unsubscribe: Unsubscribe | null = null;

  constructor(private readonly deps: { store: ToolNameStore; bus: EventBus; logger: Logger }) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.deps.bus.subscribe('providers.changed', () => this.forget());
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Forgets every cached scope. */
  forget(): void {
    this.scopes.clear();
    this.overCap.clear();
  }

  /** The scope's names as cached (loaded on first use); a tool may lack a name another replica gave it since. */
  cached(scope: string): Promise<ScopeNames> {
    return this.scopes.get(scope) ?? this.reload(scope);
  }

  /** Gives every offered tool a name (in the order given: the first to ask for a name gets it) and answers the scope's names. */
  async name(scope: string, offered: readonly OfferedTool[]): Promise<ScopeNames> {
    let names = await this.cached(scope);
    if (unnamed(names, offered).length === 0) return names;
    names = await this.reload(scope);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const missing = this.withinCap(names, unnamed(names, offered));
      if (missing.length === 0) return names;
      await this.deps.store.add(scope, assignNames(names, missing));
      names = await this.reload(scope);
    }
    return names;
  }

  /** Reads the scope from the store; a change arriving meanwhile clears the cache, so a stale answer is never kept. */
  private reload(scope: string): Promise<ScopeNames> {
    const loading = this.deps.store.load(scope).then(indexNames);
    this.scopes.set(scope, loading);
    loading.catch(() => {
      if (this.scopes.peek(scope) === loading) this.scopes.delete(scope);
    });
    return loading;
  }

  /** The tools a provider over its cap would add are left out (logged once per provider until the next change). */
  private withinCap(names: ScopeNames, missing: readonly OfferedTool[]): OfferedTool[] {
    const room = new Map<string, number>();
    return missing.filter((tool) => {
      const id = tool.provider.id;
      const left = room.get(id) ?? MAX_NAMES_PER_PROVIDER - (names.perProvider.get(id) ?? 0);
      room.set(id, left - 1);
      if (left > 0) return true;
      if (!this.overCap.has(id)) {
        this.overCap.add(id);
        this.deps.logger.warn(
          { providerId: id, max: MAX_NAMES_PER_PROVIDER },
          'provider offers more tool names than the gateway names; the rest are left out',
        );
      }
      return false;
    });
  }
}

const unnamed = (names: ScopeNames, offered: readonly OfferedTool[]): OfferedTool[] =>
  offered.filter((t) => !names.byTool.has(toolKey(t.provider.id, t.upstreamName)));
