/**
 * Drops a Map's first-inserted entries until it holds at most `max`: the bound of this package's
 * insertion-ordered caches (the package has no runtime dependency but WordNet, so it does not
 * import core's `trimOldest`).
 */
export function trimOldest<K, V>(map: Map<K, V>, max: number): void {
  for (const oldest of map.keys()) {
    if (map.size <= max) return;
    map.delete(oldest);
  }
}
