import { describe, expect, it } from 'vitest';
import { warmUntilSettled, type WarmRound } from './warm-up.js';

/** Rounds of 1,000 calls whose CPU-seconds are `figures`, in order. */
const rounds = (figures: number[]) => {
  let i = 0;
  return async (): Promise<WarmRound> => ({ calls: 1000, cpuSeconds: figures[Math.min(i++, figures.length - 1)]! });
};

describe('warmUntilSettled', () => {
  it('keeps loading while the CPU per call falls, and stops once two rounds in a row fall less than 5 %', async () => {
    const report = await warmUntilSettled(rounds([2.6, 2.1, 1.7, 1.5, 1.48, 1.52, 1.2]));
    expect(report).toEqual({ rounds: 6, first: 2.6, last: 1.52, settled: true });
  });

  it('starts counting flat rounds again after a round that falls', async () => {
    const report = await warmUntilSettled(rounds([2, 1.98, 1.5, 1.49, 1.5]));
    expect(report).toEqual({ rounds: 5, first: 2, last: 1.5, settled: true });
  });

  it('runs at least the minimum number of rounds, and gives up unsettled at the maximum', async () => {
    expect(
      await warmUntilSettled(rounds([1, 1, 1]), { minRounds: 3, maxRounds: 9, tolerance: 0.05, flatRounds: 1 }),
    ).toMatchObject({ rounds: 3, settled: true });
    const falling = Array.from({ length: 20 }, (_, i) => 10 * 0.9 ** i);
    expect(await warmUntilSettled(rounds(falling))).toMatchObject({ rounds: 15, settled: false });
  });

  it('does not take a round without calls for a settled one', async () => {
    let i = 0;
    const report = await warmUntilSettled(async () =>
      i++ < 2 ? { calls: 0, cpuSeconds: 1 } : { calls: 1000, cpuSeconds: 1 },
    );
    expect(report.rounds).toBe(5);
  });
});
