import { describe, expect, it } from 'vitest';
import { bracket } from './bare-bracket.js';

describe('bracket', () => {
  it('weighs the two windows by their calls, and keeps each for the drift line', () => {
    const b = bracket({ cpu: 0.1, calls: 1000, failures: 0 }, { cpu: 0.6, calls: 3000, failures: 2 });
    expect(b.perThousand).toBeCloseTo(0.175, 6);
    expect(b.before).toBeCloseTo(0.1, 6);
    expect(b.after).toBeCloseTo(0.2, 6);
    expect(b.failures).toBe(2);
  });

  it('a window without calls does not divide by zero', () => {
    expect(bracket({ cpu: 0, calls: 0, failures: 0 }, { cpu: 0.2, calls: 1000, failures: 0 }).perThousand).toBeCloseTo(
      0.2,
      6,
    );
  });
});
