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

/** Compares a run (cell → passed) with the baseline; `retried` holds the cells that failed first and passed on their retry. */
export function compare(baseline: Baseline, results: Map<Cell, boolean>, retried: Set<Cell>): RatchetResult {
  const flaky = new Set([...baseline.flaky, ...retried]);
  const passing = new Set(baseline.passing);
  const regressions = [...passing].filter((cell) => results.has(cell) && !results.get(cell) && !flaky.has(cell));
  const newPasses = [...results].filter(([cell, passed]) => passed && !passing.has(cell) && !flaky.has(cell)).map(([cell]) => cell);
  return { regressions, newPasses, flaky: [...flaky].filter((cell) => results.has(cell)) };
}

/** The baseline from two runs: cells passing in both; cells that differ between them are flaky. Cells of topologies not run are kept. */
export async function writeBaseline(previous: Baseline, first: Map<Cell, boolean>, second: Map<Cell, boolean>): Promise<Baseline> {
  const ran = (cell: Cell) => first.has(cell);
  const passing = [...first].filter(([cell, passed]) => passed && second.get(cell) === true).map(([cell]) => cell);
  const flaky = [...first].filter(([cell, passed]) => second.has(cell) && second.get(cell) !== passed).map(([cell]) => cell);
  const next: Baseline = {
    passing: [...previous.passing.filter((cell) => !ran(cell)), ...passing].sort(),
    flaky: [...new Set([...previous.flaky.filter((cell) => !ran(cell)), ...flaky])].sort(),
  };
  await writeFile(BASELINE_URL, `${JSON.stringify(next, null, 2)}\n`);
  return next;
}
