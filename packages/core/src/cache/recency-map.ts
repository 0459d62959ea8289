import { trimOldest } from './trim-oldest.js';

interface Slot<V> {
  value: V;
  /** When the entry was last stored or moved, counted in stores and moves. */
  stamp: number;
}

/**
 * A Map bounded to `max` entries, the least recently used dropped first — approximately: a hit
 * moves its entry to the end only once at least half the bound has been stored or moved since
 * the entry last was. Moving on every hit (a delete and a set) made V8 rebuild a hot cache's
 * table every few hundred hits, and each new table outlived the young generation: ~8 % of what
 * the all-in-one promoted under `tools/call` load (docs/benchmarks.md, sixth pass). A hit entry
 * still survives at least ⌈max/2⌉ further stores.
 */
export class RecencyMap<K, V> {
  private readonly slots = new Map<K, Slot<V>>();
  private readonly max: number;
  /** How far behind the newest stamp a hit entry must be before it is moved. */
  private readonly moveAfter: number;
  private stamp = 0;

  constructor(max: number) {
    this.max = Math.max(1, max);
    this.moveAfter = Math.floor(this.max / 2);
  }

  get size(): number {
    return this.slots.size;
  }

  /** The value, as recently used. */
  get(key: K): V | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    if (this.stamp - slot.stamp >= this.moveAfter) {
      this.slots.delete(key);
      slot.stamp = ++this.stamp;
      this.slots.set(key, slot);
    }
    return slot.value;
  }

  /** The value, without marking it used. */
  peek(key: K): V | undefined {
    return this.slots.get(key)?.value;
  }

  /** Stores the value as the most recently used, dropping the least recently used past the bound. */
  set(key: K, value: V): void {
    this.slots.delete(key);
    this.slots.set(key, { value, stamp: ++this.stamp });
    trimOldest(this.slots, this.max);
  }

  delete(key: K): boolean {
    return this.slots.delete(key);
  }

  clear(): void {
    this.slots.clear();
  }

  /** Drops every entry `drop` names (a scan: for invalidations, not the hot path). */
  deleteWhere(drop: (value: V, key: K) => boolean): void {
    for (const [key, slot] of [...this.slots]) if (drop(slot.value, key)) this.slots.delete(key);
  }
}
