/** The value at percentile `p` (0–100) of ascending `sorted` samples, nearest rank; 0 when there are none. */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
