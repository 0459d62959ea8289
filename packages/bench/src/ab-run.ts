import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '@agentgw/core/free-port';
import { abSummary, type AbSamples } from './ab-summary.js';
import { allCases, type Target } from './bench-cases.js';
import { OPT_TRACE_FLAGS, OptChurn, ScriptLocator } from './opt-churn.js';
import { gatewayEnv, waitHealthy } from './gateway-under-test.js';
import { startHelper } from './helper-process.js';
import { cpuOver } from './load-run.js';
import { threadCpuSeconds } from './process-stats.js';
import { warmUpSettled, type LoadPlan } from './reference-runs.js';
import { seed } from './seed.js';
import { startScriptCommand } from './start-script-flags.js';

// Two (or more) builds of the all-in-one, each a bundle in apps/gateway/dist (where its linked
// packages resolve), started as `pnpm start` starts it and measured in alternated rounds of one
// case: CPU-s per 1,000 calls of the main thread and of the whole process. The machine's drift
// falls on every build alike, so a few per cent show in minutes where the whole bench's runs
// spread by tens. It does not replace `pnpm bench` (no bare proxy, no ratios): it tells which of
// two builds of a hot path is cheaper.
//   pnpm --filter @agentgw/bench ab dist/cli.js dist/cli-b.js --case "unified tools/call" --rounds 6
// With --trace-opt each build also prints the functions V8 compiled with TurboFan three or more
// times in the measured rounds (re-optimisation a steady load should not need); V8's printing
// costs CPU, so a traced run's CPU figures are not comparable with an untraced one's.

const HERE = fileURLToPath(new URL('.', import.meta.url));
const REPO = resolve(HERE, '../../..');
const GATEWAY = join(REPO, 'apps', 'gateway');
const ADMIN = { email: 'ab@example.com', password: 'ab-run-password-1234' };

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    case: { type: 'string', default: 'unified tools/call' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '4' },
    'trace-opt': { type: 'boolean', default: false },
  },
});
// A traced run of one build is useful on its own; a comparison needs two.
if (positionals.length < (values['trace-opt'] ? 1 : 2))
  throw new Error('give at least two bundles, e.g. dist/cli.js dist/cli-b.js (one will do with --trace-opt)');
for (const bundle of positionals)
  if (!existsSync(join(GATEWAY, bundle))) throw new Error(`${bundle}: no such bundle under apps/gateway`);
// `pnpm build` bundles without them; the start script's bundle links them beside it.
if (!existsSync(join(GATEWAY, 'dist', 'node_modules')))
  throw new Error(
    'apps/gateway/dist has no linked packages: run `pnpm start` once, or `node ../../scripts/bundle.mjs --link-externals src/cli.ts` in apps/gateway',
  );
/** A whole number from 1 up, or the run stops with the option's name. */
const wholeNumber = (name: string, text: string): number => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number from 1 up, not ${text}`);
  return n;
};
const rounds = wholeNumber('rounds', values.rounds);
const plan: LoadPlan = {
  connections: 16,
  seconds: wholeNumber('seconds', values.seconds),
  oneConnectionSeconds: 0,
  warmSeconds: 2,
  bareWindowSeconds: 0,
};

const children: ChildProcess[] = [];
const scratch: string[] = [];

/** A bench upstream's base URL; its process ends with the run. */
async function upstream(file: string): Promise<string> {
  const helper = await startHelper(file);
  children.push(helper.child);
  return `http://127.0.0.1:${helper.port}`;
}

/** One build started with start.sh's environment and flags in a scratch data directory, seeded; its target for the case. */
async function startBuild(
  bundle: string,
  urls: { agent: string; mcp: string },
): Promise<{ pid: number; target: Target; churn: OptChurn | undefined }> {
  const { env, flags } = startScriptCommand(REPO);
  const traced = values['trace-opt'] ? OPT_TRACE_FLAGS : [];
  const dataDir = mkdtempSync(join(tmpdir(), 'agentgw-ab-'));
  scratch.push(dataDir);
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...flags, ...traced, bundle, 'start', '--port', String(port), '--data-dir', dataDir],
    {
      cwd: GATEWAY,
      env: { PATH: process.env.PATH ?? '', HOME: dataDir, ...gatewayEnv(ADMIN), ...env },
      stdio: ['ignore', traced.length > 0 ? 'pipe' : 'ignore', 'inherit'],
    },
  );
  children.push(child);
  const churn = child.stdout === null ? undefined : new OptChurn(child.stdout);
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, () => child.exitCode === null);
  const seeded = await seed(base, ADMIN, urls);
  const chosen = allCases(urls.agent, urls.mcp, seeded).find((c) => c.name === values.case);
  if (chosen === undefined) throw new Error(`no case named ${values.case}`);
  return { pid: child.pid!, target: chosen.gateway({ base }), churn };
}

/** A traced build's TurboFan jobs in the measured rounds and the functions compiled three or more times. */
function printChurn(bundle: string, churn: OptChurn): void {
  churn.close();
  const { total, churning } = churn.report(3);
  const locator = new ScriptLocator(REPO);
  console.log(
    `${bundle}: ${total} TurboFan jobs in the measured rounds; ${churning.length} functions compiled 3+ times`,
  );
  for (const job of churning) console.log(`  ${job.count}× ${locator.locate(job)} ${job.name || '(anonymous)'}`);
}

const mainThreadSeconds = (pid: number) => threadCpuSeconds(pid).get(pid) ?? 0;

try {
  const urls = { agent: await upstream('agent-runtime.ts'), mcp: await upstream('mcp-upstream.ts') };
  const builds = [];
  for (const bundle of positionals) builds.push({ bundle, ...(await startBuild(bundle, urls)) });
  for (const b of builds) {
    const warm = await warmUpSettled(b.target, [b.pid], plan);
    console.log(`${b.bundle}: warmed in ${warm.rounds} rounds, ${warm.first.toFixed(3)} → ${warm.last.toFixed(3)}`);
  }
  const samples: AbSamples[] = builds.map((b) => ({ build: b.bundle, main: [], process: [] }));
  for (const b of builds) b.churn?.open();
  for (let round = 0; round < rounds; round++) {
    for (const [i, b] of builds.entries()) {
      const main = mainThreadSeconds(b.pid);
      const { load, cpu } = await cpuOver(b.target, [b.pid], plan.connections, plan.seconds);
      if (load.errors + load.non2xx > 0) throw new Error(`${b.bundle} failed ${load.errors + load.non2xx} calls`);
      const perK = (seconds: number) => (seconds * 1000) / load.total;
      samples[i]!.main.push(perK(mainThreadSeconds(b.pid) - main));
      samples[i]!.process.push(perK(cpu));
      console.log(
        `round ${round + 1} ${b.bundle}: ${load.total} calls, main ${samples[i]!.main.at(-1)!.toFixed(3)}, process ${perK(cpu).toFixed(3)}`,
      );
    }
  }
  for (const line of abSummary(samples)) console.log(line);
  for (const b of builds) if (b.churn !== undefined) printChurn(b.bundle, b.churn);
} finally {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.filter((child) => child.exitCode === null).map((child) => once(child, 'exit')));
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
}
