import { describe, expect, it } from 'vitest';
import { RecencyMap } from './recency-map.js';

const filled = (max: number, count = max) => {
  const map = new RecencyMap<string, number>(max);
  for (let i = 1; i <= count; i++) map.set(`k${i}`, i);
  return map;
};

describe('RecencyMap', () => {
  it('keeps at most max entries, dropping the oldest stored first', () => {
    const map = filled(3, 5);
    expect(map.size).toBe(3);
    expect([map.peek('k1'), map.peek('k2'), map.peek('k3'), map.peek('k5')]).toEqual([undefined, undefined, 3, 5]);
  });

  it('moves an entry hit once half the bound was stored after it, so it outlives the ones not hit', () => {
    const map = filled(10);
    expect(map.get('k1')).toBe(1); // nine stores behind: moved to the end
    map.set('k11', 11);
    expect(map.peek('k1')).toBe(1);
    expect(map.peek('k2')).toBeUndefined();
  });

  it('leaves a recently stored entry in place on a hit, and it still survives at least half the bound of further stores (here nine: it was ninth of ten)', () => {
    const map = filled(10);
    expect(map.get('k9')).toBe(9); // one store behind: not moved
    for (let i = 11; i <= 15; i++) map.set(`k${i}`, i);
    expect(map.peek('k9')).toBe(9);
    for (let i = 16; i <= 19; i++) map.set(`k${i}`, i);
    expect(map.peek('k9')).toBeUndefined();
  });

  it('is exact least-recently-used for a bound of two', () => {
    const map = filled(2);
    map.get('k1');
    map.set('k3', 3);
    expect([map.peek('k1'), map.peek('k2'), map.peek('k3')]).toEqual([1, undefined, 3]);
  });

  it('peek does not mark an entry used; delete, deleteWhere and clear drop entries', () => {
    const map = filled(2);
    map.peek('k1');
    map.set('k3', 3);
    expect(map.peek('k1')).toBeUndefined();
    map.deleteWhere((value) => value === 3);
    expect(map.peek('k3')).toBeUndefined();
    expect(map.delete('k2')).toBe(true);
    map.set('k4', 4);
    map.clear();
    expect(map.size).toBe(0);
  });
});
