import { readFile, writeFile } from 'node:fs/promises';

/** A cell of the table: `<topology> | <endpoint> | <column> | <scenario>`. */
export type Cell = string;

/** The committed baseline: cells that passed twice in a row, and cells seen to flip (never ratcheted). */
export interface Baseline {
  passing: Cell[];
  flaky: Cell[];
}

export const BASELINE_URL = new URL('../conformance-baseline.json', import.meta.url);

export async function readBaseline(): Promise<Baseline> {
  try {
    return JSON.parse(await readFile(BASELINE_URL, 'utf8')) as Baseline;
  } catch {
    return { passing: [], flaky: [] };
  }
}

/** What one run means against the baseline: regressions fail CI; new passes and flips are reported. */
export interface RatchetResult {
  regressions: Cell[];
  newPasses: Cell[];
  flaky: Cell[];
}

/**
 * The suite's checks that read a stream for a fixed sub-second window (500-1500 ms), with the
 * message each gives when no frame arrived in it at all: on a starved machine that says nothing
 * of what the server would send. Any other message of these checks is a real failure.
 */
const FRAME_WINDOW_MISSES: Record<string, string> = {
  'sep-2575-http-server-no-independent-requests-on-stream':
    'Failed to receive progressive stream chunk execution frames',
  'sep-2575-server-no-log-without-loglevel':
    'Logging target endpoint context dropped or failed to yield frame structures',
  'sep-2575-server-sends-subscription-ack':
    'Failed to open or receive frames from the subscriptions/listen stream endpoint',
  'sep-2575-server-tags-subscription-id': 'Failed to open stream line or tracking frames are missing completely',
  'sep-2575-server-honors-notification-filter':
    'Strict subscription filtering line failed to return communication frames',
};

/** Whether every failure of a verdict is a frame-window check that saw no frame at all. */
export function onlyFrameWindowMisses(failures: readonly string[]): boolean {
  return (
    failures.length > 0 &&
    failures.every((failure) =>
      Object.entries(FRAME_WINDOW_MISSES).some(([id, message]) => failure.startsWith(`${id} FAILURE: ${message}`)),
    )
  );
}

/**
 * Compares a run (cell → passed) with the baseline. `retried`: cells that failed first and
 * passed on a retry (flaky). `windowMissed`: cells whose every retry failed only frame-window
 * checks with no frame (reported, not regressions).
 */
export function compare(
  baseline: Baseline,
  results: Map<Cell, boolean>,
  retried: Set<Cell>,
  windowMissed: Set<Cell> = new Set(),
): RatchetResult {
  const flaky = new Set([...baseline.flaky, ...retried]);
  const passing = new Set(baseline.passing);
  const regressions = [...passing].filter(
    (cell) => results.has(cell) && !results.get(cell) && !flaky.has(cell) && !windowMissed.has(cell),
  );
  const newPasses = [...results]
    .filter(([cell, passed]) => passed && !passing.has(cell) && !flaky.has(cell))
    .map(([cell]) => cell);
  return { regressions, newPasses, flaky: [...flaky].filter((cell) => results.has(cell)) };
}

/** The baseline from two runs: cells passing in both; cells that differ between them are flaky. Cells of topologies not run are kept. */
export async function writeBaseline(
  previous: Baseline,
  first: Map<Cell, boolean>,
  second: Map<Cell, boolean>,
): Promise<Baseline> {
  const ran = (cell: Cell) => first.has(cell);
  const passing = [...first].filter(([cell, passed]) => passed && second.get(cell) === true).map(([cell]) => cell);
  const flaky = [...first]
    .filter(([cell, passed]) => second.has(cell) && second.get(cell) !== passed)
    .map(([cell]) => cell);
  const next: Baseline = {
    passing: [...previous.passing.filter((cell) => !ran(cell)), ...passing].sort(),
    flaky: [...new Set([...previous.flaky.filter((cell) => !ran(cell)), ...flaky])].sort(),
  };
  await writeFile(BASELINE_URL, `${JSON.stringify(next, null, 2)}\n`);
  return next;
}
