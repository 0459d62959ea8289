/**
 * A warm-up that lasts until the JIT has settled. A short fixed warm-up measured the gateway while
 * V8 was still optimising its code: with thousands of functions on a call's path, TurboFan keeps
 * V8's helper threads busy for 20 s and more at 16 connections on two cores, which a bare proxy
 * of a hundred lines is done with in a second. What a call costs is what a long-running
 * process pays, so each side is loaded in rounds until a round's CPU per call stops falling.
 */

/** One round of unmeasured load: the calls it made and the CPU-seconds the watched processes used. */
export interface WarmRound {
  calls: number;
  cpuSeconds: number;
}

/** How a warm-up went: CPU-seconds per 1,000 calls in its first and last round. */
export interface WarmUpReport {
  rounds: number;
  first: number;
  last: number;
  settled: boolean;
}

export interface WarmUpOptions {
  /** Rounds to run at least (the first round's figure carries start-up work; compare from the second). */
  minRounds: number;
  maxRounds: number;
  /** A round that is not this much below the best so far does not count as falling (0.05 = 5 %). */
  tolerance: number;
  /** Consecutive rounds that do not fall before the warm-up ends. */
  flatRounds: number;
}

export const DEFAULT_WARM_UP: WarmUpOptions = { minRounds: 2, maxRounds: 15, tolerance: 0.05, flatRounds: 2 };

/** Runs `round` until CPU per call has stopped falling (or `maxRounds`); `round` does the load and reads the CPU. */
export async function warmUntilSettled(
  round: () => Promise<WarmRound>,
  options: WarmUpOptions = DEFAULT_WARM_UP,
): Promise<WarmUpReport> {
  const figures: number[] = [];
  let best = Infinity;
  let flat = 0;
  while (figures.length < options.maxRounds) {
    const { calls, cpuSeconds } = await round();
    const figure = calls > 0 ? (cpuSeconds * 1000) / calls : Infinity;
    figures.push(figure);
    // A round without calls says nothing of the JIT: it never counts as flat.
    if (!Number.isFinite(figure) || figure < best * (1 - options.tolerance)) flat = 0;
    else flat += 1;
    best = Math.min(best, figure);
    if (figures.length >= options.minRounds && flat >= options.flatRounds)
      return { rounds: figures.length, first: figures[0]!, last: figure, settled: true };
  }
  return { rounds: figures.length, first: figures[0]!, last: figures.at(-1)!, settled: false };
}
