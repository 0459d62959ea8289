import { describe, expect, it } from 'vitest';
import { abSummary } from './ab-summary.js';

describe('abSummary', () => {
  it('gives each build its medians and spread, and the later ones against the first', () => {
    const lines = abSummary([
      { build: 'a.js', main: [0.4, 0.3, 0.5], process: [0.6, 0.8, 0.7] },
      { build: 'b.js', main: [0.2, 0.3, 0.25], process: [0.35, 0.4, 0.3] },
    ]);
    expect(lines[0]).toBe(
      'a.js: main thread median 0.400 (0.300–0.500), process median 0.700 (0.600–0.800) CPU-s per 1,000 calls over 3 rounds',
    );
    expect(lines[1]).toContain('main thread median 0.250 (0.200–0.300)');
    expect(lines[1]).toContain('× first: main 0.625, process 0.500');
  });

  it('says nothing of no builds', () => {
    expect(abSummary([])).toEqual([]);
  });
});
