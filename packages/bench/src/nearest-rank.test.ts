import { describe, expect, it } from 'vitest';
import { nearestRank } from './nearest-rank.js';

describe('nearestRank', () => {
  it('takes the nearest-rank percentile of sorted samples', () => {
    const samples = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(nearestRank(samples, 50)).toBe(50);
    expect(nearestRank(samples, 99)).toBe(99);
    expect(nearestRank(samples, 100)).toBe(100);
    expect(nearestRank([7], 99)).toBe(7);
    expect(nearestRank([], 50)).toBe(0);
  });
});
