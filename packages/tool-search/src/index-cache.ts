import { ToolIndex, type ProviderLabel } from './tool-index.js';
import type { ListedTool } from './tool-fields.js';
import { trimOldest } from './bounded-map.js';

/**
 * Built indexes by key (the caller's fingerprint of a visible tool set), least recently used
 * evicted past `maxEntries`: callers whose policies differ see different sets, and each set is
 * indexed once while it is in use.
 */
export class ToolIndexCache<T extends ListedTool> {
  private readonly entries = new Map<string, ToolIndex<T>>();

  constructor(private readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
  }

  /** The index cached under `key`, else the one `tools()` gives (with `providerOf`'s providers), built and cached. */
  get(key: string, tools: () => readonly T[], providerOf?: (tool: T) => ProviderLabel | null): ToolIndex<T> {
    const cached = this.peek(key);
    if (cached) return cached;
    const built = ToolIndex.build(tools(), providerOf);
    this.entries.set(key, built);
    trimOldest(this.entries, this.maxEntries);
    return built;
  }

  /** The index cached under `key` (now the most recently used), or undefined: lets a caller gather what a build needs only on a miss. */
  peek(key: string): ToolIndex<T> | undefined {
    const cached = this.entries.get(key);
    if (cached) {
      // Re-inserted so the Map's insertion order is the recency order.
      this.entries.delete(key);
      this.entries.set(key, cached);
    }
    return cached;
  }

  /** How many indexes are held. */
  get size(): number {
    return this.entries.size;
  }
}
