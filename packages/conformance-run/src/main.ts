import { startConformanceServer, startEverything } from '@agentgw/testkit';
import { registerUpstream, startTopology } from './gateway-setup.js';
import { walkEverything, type WalkStep } from './everything-walk.js';
import { startHeaderForwarder } from './forwarder.js';
import { startConformanceEverything } from './conformance-everything.js';
import { runOptions } from './run-options.js';
import { compare, onlyFrameWindowMisses, readBaseline, writeBaseline, type Cell } from './ratchet.js';
import { COLUMNS, NOT_RUN, runColumn, scenariosOf, type ScenarioVerdict, type SuiteColumn } from './suite-cli.js';

const options = runOptions(process.argv.slice(2));
const CONCURRENCY = options.concurrency;
const TOPOLOGIES = options.topologies;
const out = (line = '') => process.stdout.write(`${line}\n`);

type Endpoint = 'direct' | 'unified' | 'proxy';
interface Target {
  topology: string;
  endpoint: Endpoint;
  conformanceUrl: string;
  everythingUrl: string;
  token: string | null;
}
interface Outcome {
  cells: Map<Cell, boolean>;
  notes: Map<Cell, string>;
  /** The last retry's verdict of each failed cell that was retried (while its topology still ran). */
  retried: Map<Cell, ScenarioVerdict>;
}

async function pool<T>(jobs: (() => Promise<T>)[], size: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, jobs.length) }, async () => {
      while (next < jobs.length) {
        const index = next++;
        results[index] = await jobs[index]!();
      }
    }),
  );
  return results;
}

const cellOf = (target: Pick<Target, 'topology' | 'endpoint'>, column: string, row: string): Cell =>
  `${target.topology} | ${target.endpoint} | ${column} | ${row}`;

async function measure(targets: Target[], scenarios: Map<SuiteColumn, string[]>, outcome: Outcome): Promise<void> {
  const jobs = targets.flatMap((target) =>
    COLUMNS.map((column) => async () => {
      const verdicts = await runColumn(column, target.conformanceUrl, scenarios.get(column)!);
      for (const [scenario, verdict] of verdicts) record(outcome, cellOf(target, column.label, scenario), verdict);
    }),
  );
  // The walks mostly wait (log period, long-running steps): they run one after another beside the suite pool.
  const walks = async () => {
    for (const target of targets) {
      const steps: WalkStep[] = await walkEverything(target.everythingUrl, target.token);
      for (const step of steps) {
        outcome.cells.set(cellOf(target, 'everything', step.step), step.pass);
        outcome.notes.set(cellOf(target, 'everything', step.step), step.note);
      }
    }
  };
  await Promise.all([pool(jobs, CONCURRENCY), walks()]);
}

function record(outcome: Outcome, cell: Cell, verdict: ScenarioVerdict): void {
  outcome.cells.set(cell, verdict.pass);
  if (!verdict.pass) outcome.notes.set(cell, verdict.failures.slice(0, 2).join('; '));
}

function printTable(outcome: Outcome): void {
  const byTopology = new Map<string, Map<string, Map<string, boolean>>>();
  const summary: string[] = [];
  for (const [cell, passed] of outcome.cells) {
    const [topology, endpoint, column, row] = cell.split(' | ') as [string, string, string, string];
    const columns = byTopology.get(topology) ?? new Map<string, Map<string, boolean>>();
    byTopology.set(topology, columns);
    const key = `${column} · ${endpoint}`;
    const rows = columns.get(key) ?? new Map<string, boolean>();
    columns.set(key, rows);
    rows.set(row, passed);
  }
  for (const [topology, columns] of byTopology) {
    const keys = [...columns.keys()].sort();
    const rows = [...new Set(keys.flatMap((key) => [...columns.get(key)!.keys()]))].sort();
    out(`\n## conformance table: ${topology}`);
    out(`| scenario | ${keys.join(' | ')} |`);
    out(`|---|${keys.map(() => '---').join('|')}|`);
    for (const row of rows)
      out(
        `| ${row} | ${keys.map((key) => (columns.get(key)!.has(row) ? (columns.get(key)!.get(row) ? 'pass' : '**FAIL**') : '')).join(' | ')} |`,
      );
    for (const key of keys) {
      const cells = [...columns.get(key)!.values()];
      const [column, endpoint] = key.split(' · ');
      summary.push(`${endpoint} ${column} ${topology}: ${cells.filter(Boolean).length}/${cells.length}`);
    }
  }
  out('\n## failures (first checks that failed)');
  for (const [cell, note] of outcome.notes) if (!outcome.cells.get(cell)) out(`- ${cell}: ${note}`);
  out('\n## summary (passing/cells per endpoint, column, topology)');
  for (const line of summary) out(line);
}

/** The suite's upstream: our fixture, or the conformance project's everything-server (exits saying why when it cannot start). */
async function startSuiteUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  if (options.upstream === 'fixture') return startConformanceServer();
  const server = await startConformanceEverything();
  if (typeof server === 'string') {
    out(`[conformance] cannot run against the conformance everything-server: ${server}`);
    process.exit(2);
  }
  return { url: server.url, close: async () => void server.child.kill('SIGTERM') };
}

/** A failed cell run again; `attempt` counts its retries from 1. */
type Rerun = (attempt: number) => Promise<ScenarioVerdict>;

/**
 * How to run a cell of `targets` again: its scenario alone, or for a walk step the target's
 * walk (one walk per target and attempt, shared by all of that target's failed steps: a walk
 * takes ~20 s, mostly the log period). Null for a cell of another topology.
 */
function rerunOf(targets: Target[], cell: Cell, walks: Map<string, Promise<WalkStep[]>>): Rerun | null {
  const [topology, endpoint, column, row] = cell.split(' | ') as [string, string, string, string];
  const target = targets.find((t) => t.topology === topology && t.endpoint === endpoint);
  if (!target) return null;
  if (column === 'everything') {
    return async (attempt) => {
      const key = `${topology} | ${endpoint} | ${attempt}`;
      const walk = walks.get(key) ?? walkEverything(target.everythingUrl, target.token);
      walks.set(key, walk);
      const step = (await walk).find((s) => s.step === row);
      return step ? { pass: step.pass, checks: 1, failures: step.pass ? [] : [step.note] } : NOT_RUN;
    };
  }
  const suite = COLUMNS.find((c) => c.label === column);
  return suite ? async () => (await runColumn(suite, target.conformanceUrl, [row], row)).get(row)! : null;
}

/** `retry`: which failed cells to run again (up to RETRIES times) before their topology stops. */
async function runOnce(retry: (cell: Cell) => boolean = () => false): Promise<Outcome> {
  const fixture = await startSuiteUpstream();
  const everything = await startEverything();
  const scenarios = new Map<SuiteColumn, string[]>();
  for (const column of COLUMNS) scenarios.set(column, await scenariosOf(column));
  const outcome: Outcome = { cells: new Map(), notes: new Map(), retried: new Map() };
  const stops: (() => Promise<void>)[] = [];
  const walks = new Map<string, Promise<WalkStep[]>>();
  // Retried here, after each topology's measurement and before it stops: a retry must reach a live gateway.
  const retryFailed = async (targets: Target[]) => {
    for (const [cell, passed] of [...outcome.cells]) {
      const rerun = passed || !retry(cell) || outcome.retried.has(cell) ? null : rerunOf(targets, cell, walks);
      if (rerun) outcome.retried.set(cell, await retried(rerun));
    }
  };
  try {
    const direct: Target = {
      topology: 'direct',
      endpoint: 'direct',
      conformanceUrl: fixture.url,
      everythingUrl: everything.url,
      token: null,
    };
    await measure([direct], scenarios, outcome);
    await retryFailed([direct]);
    for (const topology of TOPOLOGIES) {
      const started = Date.now();
      const target = await startTopology(topology);
      if (typeof target === 'string') {
        out(`[conformance] ${target}`);
        continue;
      }
      stops.push(() => target.stop());
      const fixtureReg = await registerUpstream(target, 'conformance-fixture', fixture.url);
      const everythingReg = await registerUpstream(target, 'server-everything', everything.url);
      const forwarder = await startHeaderForwarder(target.baseUrl, fixtureReg.token);
      stops.push(() => forwarder.close());
      const targets: Target[] = (['unified', 'proxy'] as const).map((endpoint) => ({
        topology,
        endpoint,
        conformanceUrl: `${forwarder.origin}${fixtureReg.paths[endpoint]}`,
        everythingUrl: `${target.baseUrl}${everythingReg.paths[endpoint]}`,
        token: everythingReg.token,
      }));
      await measure(targets, scenarios, outcome);
      await retryFailed(targets);
      out(`[conformance] ${topology}: measured in ${Math.round((Date.now() - started) / 1000)} s`);
      while (stops.length > 0) await stops.pop()!();
    }
  } finally {
    while (stops.length > 0) await stops.pop()!().catch(() => undefined);
    everything.child.kill('SIGTERM');
    await fixture.close();
  }
  return outcome;
}

/**
 * A failed baseline cell's scenario runs alone up to RETRIES more times, a pause apart: some of
 * the suite's checks give a server 500-800 ms for its first stream frame, which CI's two busy
 * cores can miss (a direct, unproxied fixture failed sep-2575's 600 ms check twice in a row).
 * A real regression fails every run. Resolves with the last run's verdict.
 */
const RETRIES = 3;
async function retried(rerun: Rerun): Promise<ScenarioVerdict> {
  let verdict = NOT_RUN;
  for (let attempt = 1; attempt <= RETRIES; attempt++) {
    verdict = await rerun(attempt);
    if (verdict.pass) return verdict;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  return verdict;
}

const startedAt = Date.now();
const baseline = await readBaseline();
// Only the ratchet retries: a failed cell the baseline says passes (a walk step too: a step's call can
// miss its 10 s limit on CI's busy cores, as the distributed proxy's get-roots-list has).
const ratchetRetries = (cell: Cell) =>
  options.upstream === 'fixture' &&
  !options.updateBaseline &&
  baseline.passing.includes(cell) &&
  !baseline.flaky.includes(cell);
const first = await runOnce(ratchetRetries);
printTable(first);
if (options.updateBaseline) {
  out('\n[conformance] second run for the baseline (only cells passing twice are recorded)');
  const second = await runOnce();
  const next = await writeBaseline(baseline, first.cells, second.cells);
  for (const [cell, passed] of second.cells)
    if (first.cells.get(cell) !== passed)
      out(`[conformance] flaky: ${cell}: ${(passed ? first : second).notes.get(cell) ?? ''}`);
  out(`[conformance] baseline written: ${next.passing.length} passing cells, ${next.flaky.length} flaky`);
} else if (options.upstream === 'fixture') {
  const failedBaselineCells = baseline.passing.filter(
    (cell) => first.cells.get(cell) === false && !baseline.flaky.includes(cell),
  );
  const passedOnRetry = new Set<Cell>();
  const windowMissed = new Map<Cell, string[]>();
  const lastRetry = new Map<Cell, string[]>();
  for (const cell of failedBaselineCells) {
    const verdict = first.retried.get(cell);
    if (!verdict) continue;
    if (verdict.pass) passedOnRetry.add(cell);
    else if (onlyFrameWindowMisses(verdict.failures)) windowMissed.set(cell, verdict.failures);
    else lastRetry.set(cell, verdict.failures);
  }
  const result = compare(baseline, first.cells, passedOnRetry, new Set(windowMissed.keys()));
  out(
    `\n[conformance] ${first.cells.size} cells, ${[...first.cells.values()].filter(Boolean).length} pass; baseline ${baseline.passing.length}; ${Math.round((Date.now() - startedAt) / 1000)} s`,
  );
  for (const cell of result.flaky) out(`[conformance] flaky (excluded from the ratchet): ${cell}`);
  for (const cell of result.newPasses)
    out(
      `[conformance] new pass (run \`pnpm --filter @agentgw/conformance-run conformance --update-baseline\`): ${cell}`,
    );
  for (const [cell, failures] of windowMissed)
    out(
      `[conformance] NO FRAME IN THE SUITE'S WINDOW on every retry (not counted as a regression): ${cell}: ${failures.join('; ')}`,
    );
  for (const cell of result.regressions) {
    // The last retry's failing checks too: what decided that the cell regressed.
    const retry = lastRetry.get(cell);
    out(
      `[conformance] REGRESSION (passed in the baseline): ${cell}: ${first.notes.get(cell) ?? ''}${retry ? ` | last retry: ${retry.join('; ') || '(no failing check named)'}` : ''}`,
    );
  }
  if (options.ratchet && result.regressions.length > 0) process.exitCode = 1;
}
