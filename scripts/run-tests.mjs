// `pnpm test`: the root's format check, lint and typecheck, and every workspace package's own `test` script, on a
// pool of slots with the longest suites started first. Turbo starts tasks in package-graph
// order, so the apps (which depend on everything) began their suites 20-35 minutes into a CI
// run on two cores and ran on alone at the end; started first, they overlap everything else.
// Every job runs to its end (a failure does not stop the others); the exit code is 1 when any
// failed, and the failed jobs are named last. Output lines carry the job's name, as turbo's do.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const USAGE =
  'usage: node scripts/run-tests.mjs [--dry-run] [--concurrency N]   (--dry-run: print the jobs in order, run none)';
const dryRun = process.argv[2] === '--dry-run';
const args = process.argv.slice(dryRun ? 3 : 2);
const concurrency = args.length === 0 ? 4 : args.length === 2 && args[0] === '--concurrency' ? Number(args[1]) : NaN;
if (!(Number.isInteger(concurrency) && concurrency > 0)) {
  console.error(USAGE);
  process.exit(2);
}

// Longest first, as measured on CI (two cores, four slots; 2026-11-28). A package not listed
// runs after these, so a new package is never left out; only its start may come late.
const LONGEST_FIRST = [
  '@agentgw/gateway',
  '@agentgw/mcp-gateway',
  '@agentgw/admin-api',
  'lint',
  'typecheck',
  '@agentgw/service-kit',
  '@agentgw/conformance-run',
  '@agentgw/e2e',
  '@agentgw/db',
  '@agentgw/audit-writer',
  '@agentgw/vault',
  '@agentgw/confirmation-hub',
  '@agentgw/dashboard',
  '@agentgw/confirmations',
  '@agentgw/auth',
  '@agentgw/infra',
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

/** The root's checks (package.json scripts): formatting, and lint and typecheck each over one TypeScript program. */
const rootChecks = ['format:check', 'lint', 'typecheck'].map((script) => ({
  name: script,
  label: script,
  command: ['pnpm', 'run', script],
  cwd: '.',
  prefix: true,
}));

const rank = (job) => {
  const at = LONGEST_FIRST.indexOf(job.name);
  return at === -1 ? LONGEST_FIRST.length : at;
};
const jobs = [...rootChecks, ...testJobs()].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
if (dryRun) {
  for (const job of jobs) console.log(`${job.label}  (${job.cwd}: ${job.command.join(' ')})`);
  process.exit(0);
}

/** Runs one job, its output line by line under its label; resolves with its exit code. */
function run(job) {
  return new Promise((resolve) => {
    const [command, ...rest] = job.command;
    const child = spawn(command, rest, { cwd: job.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) =>
        process.stdout.write(job.prefix ? `${job.label}: ${line}\n` : `${line}\n`),
      );
    }
    child.on('error', (err) => {
      process.stdout.write(`${job.label}: could not start: ${err.message}\n`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const started = Date.now();
const seconds = (since) => Math.round((Date.now() - since) / 1000);
const failed = [];
let next = 0;
async function slot() {
  while (next < jobs.length) {
    const job = jobs[next++];
    const began = Date.now();
    process.stdout.write(`==> ${job.label}: started at ${seconds(started)} s\n`);
    const code = await run(job);
    process.stdout.write(
      `==> ${job.label}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${seconds(began)} s\n`,
    );
    if (code !== 0) failed.push(job.label);
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, slot));

console.log(`\n${jobs.length} jobs in ${seconds(started)} s on ${concurrency} slots`);
if (failed.length > 0) {
  console.log(`FAILED: ${failed.join(', ')}`);
  process.exit(1);
}
