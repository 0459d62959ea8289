// `pnpm test`: the root's format check, lint and typecheck, and every workspace package's own `test` script, on a
// pool of slots with the longest suites started first. Turbo starts tasks in package-graph
// order, so the apps (which depend on everything) began their suites 20-35 minutes into a CI
// run on two cores and ran on alone at the end; started first, they overlap everything else.
// Every job runs to its end (a failure does not stop the others); the exit code is 1 when any
// failed, and the failed jobs are named last. Output lines carry the job's name, as turbo's do.
// A failed job's last lines also go to $VITEST_REPORT_DIR/failed-jobs.txt, which
// scripts/test-summary.mjs prints at the very end: a CI log's tail then says why, not only what.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';

const USAGE =
  'usage: node scripts/run-tests.mjs [--dry-run] [--concurrency N]   (--dry-run: print the jobs in order, run none;\n' +
  '  NODE24_BIN=<dir holding a Node 24 `node`> adds the Node 24 suites to the pool)';
const dryRun = process.argv[2] === '--dry-run';
const args = process.argv.slice(dryRun ? 3 : 2);
const concurrency = args.length === 0 ? 4 : args.length === 2 && args[0] === '--concurrency' ? Number(args[1]) : NaN;
if (!(Number.isInteger(concurrency) && concurrency > 0)) {
  console.error(USAGE);
  process.exit(2);
}

// Longest first, as measured on CI (two cores, four slots; 2026-11-28). A package not listed
// runs after these, so a new package is never left out; only its start may come late. ESLint
// (lint:code) takes the old lint job's place, madge (lint:cycles) fills in later; the Node 24
// suites (NODE24_SUITES) follow their own package, the gateway's waits for the gateway's. These
// places are estimates, not yet measured on a quiet CI run.
const LONGEST_FIRST = [
  '@agentgw/gateway',
  '@agentgw/mcp-gateway',
  '@agentgw/admin-api',
  'lint:code',
  'typecheck',
  '@agentgw/service-kit',
  '@agentgw/conformance-run',
  '@agentgw/e2e',
  '@agentgw/db',
  'node24:@agentgw/db',
  'node24:@agentgw/core',
  '@agentgw/audit-writer',
  '@agentgw/vault',
  '@agentgw/confirmation-hub',
  '@agentgw/dashboard',
  '@agentgw/confirmations',
  '@agentgw/auth',
  'node24:@agentgw/auth',
  'lint:cycles',
  '@agentgw/infra',
  'node24:@agentgw/gateway',
];

/** Every workspace package (pnpm-workspace.yaml: apps/*, packages/*, infra) with a test script. */
function testJobs() {
  const dirs = [
    ...['apps', 'packages'].flatMap((parent) => readdirSync(parent).map((name) => join(parent, name))),
    'infra',
  ];
  return dirs
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
    .filter(({ manifest }) => typeof manifest.scripts?.test === 'string')
    .map(({ dir, manifest }) => ({
      name: manifest.name,
      label: `${manifest.name}:test`,
      command: ['pnpm', 'run', 'test'],
      cwd: dir,
      prefix: true,
    }));
}

/**
 * The root's checks (package.json scripts): formatting, typecheck, and lint as its two halves
 * (`pnpm lint` = lint:cycles then lint:code): madge's cycle check and ESLint are each a
 * single-threaded walk over every file, so they run side by side rather than one after the other.
 */
const rootChecks = ['format:check', 'lint:cycles', 'lint:code', 'typecheck'].map((script) => ({
  name: script,
  label: script,
  command: ['pnpm', 'run', script],
  cwd: '.',
  prefix: true,
}));

/**
 * Node 24 (the current LTS line; images run it) beside the machine's Node: the suites where the
 * runtime shows, not everything twice. The embedded database's WebAssembly engine and its worker
 * (db), crypto and JWTs (auth), config parsing (core; its Redis Cluster failover file is left to
 * the machine's Node: it tests redis-server's promotion and ioredis' reconnect, no Node API), and
 * the README's Try it end to end and the all-in-one host (gateway). The Try it runs `pnpm start`,
 * which bundles the CLI into apps/gateway/dist on a clean clone; the gateway's own suite does the
 * same, so this one starts after it (two bundles written into one dist/ at once break each other).
 * Each writes its JSON report to $VITEST_REPORT_DIR/node24 (scripts/test-summary.mjs counts it apart).
 */
const NODE24_SUITES = [
  { name: '@agentgw/core', cwd: 'packages/core', args: ['--exclude', 'src/redis/redis-failover.test.ts'] },
  { name: '@agentgw/db', cwd: 'packages/db', args: [] },
  { name: '@agentgw/auth', cwd: 'packages/auth', args: [] },
  // The bench runs on whatever node is first on PATH, and the image ships Node 24.
  {
    name: '@agentgw/bench',
    cwd: 'packages/bench',
    args: ['src/process-stats.test.ts', 'src/thread-cpu-split.test.ts'],
  },
  {
    name: '@agentgw/gateway',
    cwd: 'apps/gateway',
    args: ['src/readme-try-it.test.ts', 'src/all-in-one.test.ts'],
    after: '@agentgw/gateway',
  },
];

/** The Node 24 jobs when NODE24_BIN names a directory with Node 24's `node` (.ci/run installs it), else none. */
function node24Jobs() {
  const bin = process.env.NODE24_BIN;
  if (!bin) return [];
  const reports = process.env.VITEST_REPORT_DIR ? join(process.env.VITEST_REPORT_DIR, 'node24') : '';
  if (reports) mkdirSync(reports, { recursive: true });
  return NODE24_SUITES.map((suite) => ({
    name: `node24:${suite.name}`,
    label: `node24:${suite.name}:test`,
    command: ['pnpm', 'exec', 'vitest', 'run', ...suite.args],
    cwd: suite.cwd,
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`, VITEST_REPORT_DIR: reports },
    after: suite.after,
    prefix: true,
  }));
}

const rank = (job) => {
  const at = LONGEST_FIRST.indexOf(job.name);
  return at === -1 ? LONGEST_FIRST.length : at;
};
const jobs = [...rootChecks, ...testJobs(), ...node24Jobs()].sort(
  (a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name),
);
if (dryRun) {
  for (const job of jobs)
    console.log(`${job.label}  (${job.cwd}: ${job.command.join(' ')})${job.after ? `  after ${job.after}` : ''}`);
  process.exit(0);
}

/** Lines of a failed job's output kept for the summary (its verdict is printed last). */
const TAIL_LINES = 15;

/** Runs one job, its output line by line under its label; resolves with its exit code and last lines. */
function run(job) {
  return new Promise((resolve) => {
    const [command, ...rest] = job.command;
    const child = spawn(command, rest, { cwd: job.cwd, env: job.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail = [];
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        process.stdout.write(job.prefix ? `${job.label}: ${line}\n` : `${line}\n`);
        if (line.trim() === '') return;
        tail.push(line.length > 300 ? `${line.slice(0, 297)}...` : line);
        if (tail.length > TAIL_LINES) tail.shift();
      });
    }
    child.on('error', (err) => {
      process.stdout.write(`${job.label}: could not start: ${err.message}\n`);
      resolve({ code: 1, tail: [`could not start: ${err.message}`] });
    });
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), tail }));
  });
}

/** Appends a failed job's last lines to the report folder, for scripts/test-summary.mjs. */
function keepTail(job, code, tail) {
  const dir = process.env.VITEST_REPORT_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(
    join(dir, 'failed-jobs.txt'),
    `${job.label} (exit ${code}), its last lines:\n${tail.map((line) => `    ${line}\n`).join('')}`,
  );
}

const started = Date.now();
const seconds = (since) => Math.round((Date.now() - since) / 1000);
const failed = [];
const pending = [...jobs];
const finished = new Set();
const listed = new Set(jobs.map((job) => job.name));
/** Slots with nothing ready to start (the rest wait on a running job); woken whenever a job ends. */
const idle = [];
const ready = (job) => !job.after || !listed.has(job.after) || finished.has(job.after);
async function slot() {
  while (pending.length > 0) {
    const at = pending.findIndex(ready);
    if (at === -1) {
      await new Promise((wake) => idle.push(wake));
      continue;
    }
    const [job] = pending.splice(at, 1);
    const began = Date.now();
    process.stdout.write(`==> ${job.label}: started at ${seconds(started)} s\n`);
    const { code, tail } = await run(job);
    process.stdout.write(
      `==> ${job.label}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${seconds(began)} s\n`,
    );
    if (code !== 0) {
      failed.push(job.label);
      keepTail(job, code, tail);
    }
    finished.add(job.name);
    for (const wake of idle.splice(0)) wake();
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, slot));

console.log(`\n${jobs.length} jobs in ${seconds(started)} s on ${concurrency} slots`);
if (failed.length > 0) {
  console.log(`FAILED: ${failed.join(', ')}`);
  process.exit(1);
}
