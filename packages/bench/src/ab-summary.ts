import { nearestRank } from './nearest-rank.js';

/** One build's CPU-s per 1,000 calls, one sample per alternated round: its main thread and its whole process. */
export interface AbSamples {
  build: string;
  main: number[];
  process: number[];
}

const median = (values: readonly number[]): number =>
  nearestRank(
    [...values].sort((a, b) => a - b),
    50,
  );
const fixed = (value: number) => value.toFixed(3);

/**
 * Why: an A/B verdict is read from medians of alternated rounds (the machine drifts between
 * rounds, both builds alike), each build against the first, with the spread beside it so a
 * difference inside the noise reads as one.
 */
export function abSummary(samples: readonly AbSamples[]): string[] {
  const [first] = samples;
  if (first === undefined) return [];
  const base = { main: median(first.main), process: median(first.process) };
  return samples.map(({ build, main, process }) => {
    const m = median(main);
    const p = median(process);
    const spread = (values: number[]) => `${fixed(Math.min(...values))}–${fixed(Math.max(...values))}`;
    const against =
      build === first.build
        ? ''
        : `; × first: main ${(m / base.main).toFixed(3)}, process ${(p / base.process).toFixed(3)}`;
    return `${build}: main thread median ${fixed(m)} (${spread(main)}), process median ${fixed(p)} (${spread(process)}) CPU-s per 1,000 calls over ${main.length} rounds${against}`;
  });
}
