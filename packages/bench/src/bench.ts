/**
 * `pnpm bench`: the gateway's cost beside calling the upstream directly, each side in its own
 * process, loopback only. Processes: a raw agent runtime and a raw JSON-RPC MCP server (the
 * upstreams), the all-in-one gateway started as the README starts it (`pnpm start`'s path: the
 * gateway package's `start` script, embedded database, in a scratch data directory) and, when
 * PostgreSQL and Redis answer and nginx is installed, the six services behind the router
 * (infra/nginx/nginx.conf); a bare node:http + undici proxy per upstream (the floor of any Node
 * proxy); autocannon runs each case, and an unmeasured warm-up of the same load before it, in a
 * process of its own.
 *
 * Options: --quick (short cases), --profile DIR (CPU profile of the gateway processes, summarised
 * at the end; with --heap, allocations instead of CPU time, and with --promoted only those that outlived the young generation), --no-distributed, --redis-cluster (the distributed run also on a local Redis Cluster
 * of three primaries and three replicas, side by side with one Redis), --case NAME (only the cases
 * whose name contains NAME; repeatable).
 * Env: BENCH_SECONDS, BENCH_WARM_SECONDS, BENCH_CONNECTIONS.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startAllInOne } from './all-in-one.js';
import { startDistributed } from './distributed.js';
import { startHelper, type HelperProcess } from './helper-process.js';
import { seed } from './seed.js';
import { summariseProfiles } from './cpu-profile-summary.js';
import { summariseHeapProfiles } from './heap-profile-summary.js';
import type { GatewayUnderTest } from './gateway-under-test.js';
import { readProbes, worstDelay } from './probe-reports.js';
import { residentBytes, settledResidentBytes } from './process-stats.js';
import { readThreads, splitThreadCpu } from './thread-cpu-split.js';
import { allCases, type Case, type Seeded, type Target } from './bench-cases.js';
import { bracket } from './bare-bracket.js';
import { cpuOver, runLoad } from './load-run.js';
import {
  bareWindow,
  loadPlan,
  measureReferences,
  viaBare,
  warmUp,
  warmUpSettled,
  warmUpText,
  type References,
  type Served,
  type Sides,
} from './reference-runs.js';
import { noLines, topologyReport, type TopologyLines } from './topology-report.js';
import {
  caseRow,
  COLUMNS,
  fmt,
  gcLine,
  MB,
  memorySplit,
  partsLine,
  perThousand,
  readParts,
  row,
  threadLine,
  type CaseFigures,
} from './report-lines.js';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    profile: { type: 'string' },
    heap: { type: 'boolean', default: false },
    promoted: { type: 'boolean', default: false },
    'no-distributed': { type: 'boolean', default: false },
    'redis-cluster': { type: 'boolean', default: false },
    case: { type: 'string', multiple: true },
  },
});
const PLAN = loadPlan(process.env, options.quick);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PROBE = new URL('./eventloop-probe.mjs', import.meta.url).href;
const ADMIN = { email: 'bench-admin@example.com', password: 'bench-admin-password' };

const children: ChildProcess[] = [];
/** The floor of a unified tools/call (floor-tools-call.ts): the spec's plain work with no layers, beside the bare proxy. */
const FLOOR_CASE = 'unified tools/call';
const FLOOR_TOKEN = 'bench-floor-runtime-token';

/** A helper of this package in its own process, with the event-loop probe; ended with the run. */
async function startUpstream(file: string, probeDir: string, args: string[] = []): Promise<HelperProcess> {
  const helper = await startHelper(file, args, { module: PROBE, dir: probeDir });
  children.push(helper.child);
  return helper;
}

/** The six services on one Redis or on a local Redis Cluster, seeded and measured; undefined (said why) when they cannot run here. */
async function runDistributed(
  redis: 'single' | 'cluster',
  mcpUrl: string,
  sides: Sides,
): Promise<Record<string, number> | undefined> {
  const distributed = await startDistributed({
    repo: REPO,
    probe: PROBE,
    probeDir: sides.probeDir,
    admin: ADMIN,
    profileEnv: profileEnv(redis === 'cluster' ? 'distributed-cluster' : 'distributed'),
    redis,
  });
  if (typeof distributed === 'string') {
    console.log(`\n== distributed (${redis === 'cluster' ? 'Redis Cluster' : 'one Redis'}): skipped (${distributed})`);
    return undefined;
  }
  try {
    const { agentUrl } = sides.upstreams;
    const seeded = await seed(distributed.base, ADMIN, { agent: agentUrl, mcp: mcpUrl });
    return await runCases(distributed, casesFor(agentUrl, mcpUrl, seeded), sides);
  } finally {
    await distributed.stop();
  }
}

/** The cases `--case` selects (all without it): profiling one path keeps the others out of its profile. */
function casesFor(agentUrl: string, mcpUrl: string, seeded: Seeded): Case[] {
  const wanted = options.case;
  return allCases(agentUrl, mcpUrl, seeded).filter(
    (c) => wanted === undefined || wanted.some((w) => c.name.includes(w)),
  );
}

/** What makes a topology's processes profile themselves (eventloop-probe.mjs): its directory, CPU or heap. */
function profileEnv(topology: string): Record<string, string> {
  if (!options.profile) return {};
  return {
    BENCH_PROFILE_DIR: profileDirFor(topology),
    ...(options.heap ? { BENCH_PROFILE_HEAP: options.promoted ? 'promoted' : '1' } : {}),
  };
}

/** One profile directory per topology, so each summary reads its own processes. */
function profileDirFor(topology: string): string {
  const dir = join(options.profile!, topology);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Twenty calls of each side of each case, each answered 200: a case that cannot run fails before anything is measured. */
async function checkCases(g: GatewayUnderTest, cases: readonly Case[], sides: Sides): Promise<void> {
  const check = async (t: Target) => {
    for (let i = 0; i < 20; i++) {
      const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body });
      await res.text();
      if (res.status !== 200) throw new Error(`${t.url} answered ${res.status} while warming up`);
    }
  };
  for (const c of cases) {
    await check(c.direct);
    await check(viaBare(c.direct, sides).target);
    await check(c.gateway(g));
  }
}

/** The gateway's servers' resident memory now. */
const serversRss = (g: GatewayUnderTest) => g.servers().reduce((sum, pid) => sum + residentBytes(pid), 0);

/**
 * One case through the gateway: its settled warm-up, its measured window between the bare
 * proxy's two, then one connection. Adds the case's lines to `lines`; returns its row's figures
 * and the gateway's resident memory at the end of its load.
 */
async function measureCase(
  g: GatewayUnderTest,
  c: Case,
  ref: References,
  sides: Sides,
  workerThreads: ReadonlySet<number>,
  lines: TopologyLines,
): Promise<{ figures: CaseFigures; loadedRss: number }> {
  const { plan, probeDir } = sides;
  const target = c.gateway(g);
  const pids = g.pids();
  const warmed = await warmUpSettled(target, pids, plan);
  lines.warmUps.push(`${c.name}: gateway ${warmUpText(warmed)}; bare proxy ${warmUpText(ref.bare.warmUp)}`);
  const bareBefore = await bareWindow(c.direct, sides);
  await readProbes(g.servers(), probeDir);
  const threadsBefore = readThreads(g.servers());
  const parts = g.parts();
  const partsBefore = readParts(parts);
  const { load: many, cpu } = await cpuOver(target, pids, plan.connections, plan.seconds);
  const partsAfter = g.parts();
  const partsRead = readParts(partsAfter);
  const threadsAfter = readThreads(g.servers());
  const loaded = await readProbes(g.servers(), probeDir);
  const loadedRss = serversRss(g);
  const bareK = bracket(bareBefore, await bareWindow(c.direct, sides));
  lines.bareDrift.push(`${c.name}: ${fmt(bareK.before, 3)} before, ${fmt(bareK.after, 3)} after`);
  if (parts.length > 1)
    lines.byPart.push(partsLine(c.name, partsBefore, partsRead, partsAfter, many.total, bareK.perThousand));
  lines.threads.push(threadLine(c.name, splitThreadCpu(threadsBefore, threadsAfter, workerThreads), many.total));
  const delay = worstDelay(loaded);
  lines.delays.push(`${c.name}: p50 ${delay.p50} ms, p99 ${delay.p99} ms, max ${delay.max} ms`);
  lines.collections.push(gcLine(c.name, loaded, many.total));
  lines.endOfLoad.push(`${c.name}: ${memorySplit(loaded)}`);
  const cpuK = perThousand(cpu, many.total);
  if (ref.floorK !== undefined)
    lines.floors.push(
      `${c.name}: floor ${fmt(ref.floorK, 3)} (${fmt(ref.floorK / bareK.perThousand, 1)}× bare); the gateway ${fmt(cpuK / ref.floorK, 1)}× the floor`,
    );
  const bareErrors = ref.bare.many.errors + ref.bare.many.non2xx + ref.bare.one.errors + ref.bare.one.non2xx;
  if (bareErrors + bareK.failures > 0)
    lines.bareErrors.push(`${c.name}: ${bareErrors + bareK.failures} failed requests`);
  const one = await runLoad(target, 1, plan.oneConnectionSeconds);
  return {
    figures: { direct: ref.direct, bare: ref.bare, gateway: { many, one }, cpuK, bareK: bareK.perThousand },
    loadedRss,
  };
}

/** Runs every case against one gateway and prints its table; returns rps per case (for the topology comparison). */
async function runCases(g: GatewayUnderTest, cases: Case[], sides: Sides): Promise<Record<string, number>> {
  const { plan, probeDir } = sides;
  await checkCases(g, cases, sides);
  const idleRss = serversRss(g);
  const treeIdleRss = g.pids().reduce((sum, pid) => sum + residentBytes(pid), 0);
  const settled = await settledResidentBytes(g.servers());
  const idleReports = await readProbes(g.servers(), probeDir);
  const workerThreads = new Set(idleReports.flatMap((r) => r.workerThreads));
  console.log(
    `\n== ${g.name}: ${plan.connections} connections, ${plan.seconds}s per case (1 connection: ${plan.oneConnectionSeconds}s), each side after ${plan.warmSeconds}s warm-up rounds until its CPU per call stops falling`,
  );
  console.log(
    row(
      'case',
      COLUMNS.map(([title]) => title),
    ),
  );
  const rps: Record<string, number> = {};
  let loadedRss = 0;
  const lines = noLines();
  const referenceCache = new Map<string, References>();
  // Every case warmed once before any is measured: compiling the code the cases share (HTTP,
  // auth, the shell) would otherwise land in whichever case is measured first.
  for (const c of cases) await warmUp(c.gateway(g), plan);
  for (const c of cases) {
    const key = `${c.direct.url} ${c.direct.body}`;
    const ref = referenceCache.get(key) ?? (await measureReferences(c, sides, lines.delays));
    referenceCache.set(key, ref);
    const measured = await measureCase(g, c, ref, sides, workerThreads, lines);
    loadedRss = Math.max(loadedRss, measured.loadedRss);
    rps[c.name] = measured.figures.gateway.many.rps;
    console.log(caseRow(c.name, measured.figures));
  }
  const memory = { idleRss, treeIdleRss, settled, loadedRss, idleReports };
  for (const line of topologyReport(lines, memory, plan.connections)) console.log(line);
  return rps;
}

function machine(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${fmt(totalmem() / 1024 ** 3, 1)} GiB memory, node ${process.version}, ${process.platform} ${process.arch}`;
}

const scratch = mkdtempSync(join(tmpdir(), 'agentgw-bench-'));
const probeDir = mkdtempSync(join(tmpdir(), 'agentgw-bench-probe-'));
let failed = false;
try {
  console.log(
    `agentgw benchmark — ${new Date().toISOString()}\nmachine: ${machine()}\nloopback only; load generator, upstreams and gateway in separate processes`,
  );
  const agentRuntime = await startUpstream('agent-runtime.ts', probeDir);
  const mcpUpstream = await startUpstream('mcp-upstream.ts', probeDir);
  const agentUrl = `http://127.0.0.1:${agentRuntime.port}/run`;
  const mcpUrl = `http://127.0.0.1:${mcpUpstream.port}/mcp`;
  const bareProxies = new Map<string, Served>();
  for (const upstream of [agentRuntime, mcpUpstream]) {
    const origin = `http://127.0.0.1:${upstream.port}`;
    const bare = await startUpstream('bare-proxy.ts', probeDir, [origin]);
    bareProxies.set(origin, { origin: `http://127.0.0.1:${bare.port}`, pid: bare.pid });
  }
  const floorServer = await startUpstream('floor-tools-call.ts', probeDir, [mcpUrl, FLOOR_TOKEN]);
  const sides: Sides = {
    plan: PLAN,
    probeDir,
    upstreams: { agentUrl, agent: agentRuntime.pid, mcp: mcpUpstream.pid },
    bareProxies,
    floor: {
      origin: `http://127.0.0.1:${floorServer.port}`,
      pid: floorServer.pid,
      caseName: FLOOR_CASE,
      token: FLOOR_TOKEN,
    },
  };
  // First boot (initdb, migrations, generated secrets, the admin), seeded, then a restart on the
  // same data directory: the steady state an operator sees, and the one measured.
  const allInOneOptions = {
    repo: REPO,
    probe: PROBE,
    probeDir,
    dataDir: join(scratch, 'data'),
    admin: ADMIN,
    profileEnv: profileEnv('all-in-one'),
  };
  let started = Date.now();
  const firstBoot = await startAllInOne(allInOneOptions);
  let seeded: Seeded;
  try {
    const bootSeconds = (Date.now() - started) / 1000;
    seeded = await seed(firstBoot.base, ADMIN, { agent: agentUrl, mcp: mcpUrl });
    const rss = firstBoot.servers().reduce((sum, pid) => sum + residentBytes(pid), 0);
    console.log(
      `all-in-one first boot: healthy after ${fmt(bootSeconds, 1)} s, resident ${fmt(rss / MB)} MB after seeding`,
    );
  } finally {
    await firstBoot.stop();
  }
  started = Date.now();
  const allInOne = await startAllInOne(allInOneOptions);
  console.log(`all-in-one restart: healthy after ${fmt((Date.now() - started) / 1000, 1)} s`);
  let single: Record<string, number>;
  try {
    single = await runCases(allInOne, casesFor(agentUrl, mcpUrl, seeded), sides);
  } finally {
    await allInOne.stop();
  }
  if (!options['no-distributed']) {
    const kinds = options['redis-cluster'] ? (['single', 'cluster'] as const) : (['single'] as const);
    const byRedis = new Map<string, Record<string, number>>();
    for (const redis of kinds) {
      const rps = await runDistributed(redis, mcpUrl, sides);
      if (rps) byRedis.set(redis, rps);
    }
    for (const [redis, rps] of byRedis) {
      console.log(`distributed${redis === 'cluster' ? ' on the Redis Cluster' : ''} throughput ÷ all-in-one:`);
      for (const [name, value] of Object.entries(rps))
        console.log(`  ${name.padEnd(22)} ${fmt(value / single[name]!, 2)}`);
    }
    const [one, cluster] = [byRedis.get('single'), byRedis.get('cluster')];
    if (one && cluster) {
      console.log('distributed req/s, one Redis | Redis Cluster (3 primaries + 3 replicas) | cluster ÷ one:');
      for (const [name, value] of Object.entries(one))
        console.log(
          `  ${name.padEnd(22)} ${fmt(value).padStart(8)} | ${fmt(cluster[name]!).padStart(8)} | ${fmt(cluster[name]! / value, 2)}`,
        );
    }
  }
  if (options.profile) {
    for (const topology of readdirSync(options.profile)) {
      const dir = join(options.profile, topology);
      const summary = options.heap
        ? summariseHeapProfiles(dir, 15, options.promoted ? 'promoted' : 'all')
        : summariseProfiles(dir, 15);
      console.log(`\n${topology}: ${summary}`);
    }
  }
} catch (err) {
  failed = true;
  console.error(err);
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(children.filter((c) => c.exitCode === null).map((c) => once(c, 'exit')));
  rmSync(scratch, { recursive: true, force: true });
  rmSync(probeDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
