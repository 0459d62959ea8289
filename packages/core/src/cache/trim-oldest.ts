/**
 * Drops a Map's first-inserted entries until it holds at most `max`: the bound of every
 * insertion-ordered cache (an entry re-set on use makes it least-recently-used order).
 */
export function trimOldest<K, V>(map: Map<K, V>, max: number): void {
  for (const oldest of map.keys()) {
    if (map.size <= max) return;
    map.delete(oldest);
  }
}
