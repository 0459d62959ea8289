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
 * at the end; with --heap, allocations instead of CPU time), --no-distributed, --redis-cluster (the distributed run also on a local Redis Cluster
 * of three primaries and three replicas, side by side with one Redis), --case NAME (only the cases
 * whose name contains NAME; repeatable).
 * Env: BENCH_SECONDS, BENCH_WARM_SECONDS, BENCH_CONNECTIONS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startAllInOne } from './all-in-one.js';
import { startDistributed } from './distributed.js';
import { seed } from './seed.js';
import { summariseProfiles } from './cpu-profile-summary.js';
import { summariseHeapProfiles } from './heap-profile-summary.js';
import type { GatewayUnderTest } from './gateway-under-test.js';
import { readProbes, worstDelay } from './probe-reports.js';
import { cpuSeconds, residentBytes, settledResidentBytes } from './process-stats.js';
import { readThreads, splitThreadCpu } from './thread-cpu-split.js';
import { allCases, type Case, type Seeded, type Target } from './bench-cases.js';
import { bracket, type BareWindow } from './bare-bracket.js';
import { runLoad, type LoadResult } from './load-run.js';
import { warmUntilSettled, type WarmUpReport } from './warm-up.js';
import {
  COLUMNS,
  fmt,
  gcLine,
  MB,
  memoryLine,
  memorySplit,
  partsLine,
  perThousand,
  readParts,
  row,
  threadLine,
} from './report-lines.js';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    profile: { type: 'string' },
    heap: { type: 'boolean', default: false },
    'no-distributed': { type: 'boolean', default: false },
    'redis-cluster': { type: 'boolean', default: false },
    case: { type: 'string', multiple: true },
  },
});
const SECONDS = Number(process.env.BENCH_SECONDS ?? (options.quick ? 3 : 8));
const ONE_CONNECTION_SECONDS = Math.max(2, Math.round(SECONDS / 2));
/** One round of unmeasured load before a measured run; repeated until the CPU per call settles (`warm-up.ts`). */
const WARM_SECONDS = Number(process.env.BENCH_WARM_SECONDS ?? 2);
/** Each of the bare proxy's two windows around a gateway window: together as long as the gateway's. */
const BARE_WINDOW_SECONDS = Math.max(2, SECONDS / 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));
const PROBE = new URL('./eventloop-probe.mjs', import.meta.url).href;
const ADMIN = { email: 'bench-admin@example.com', password: 'bench-admin-password' };

const children: ChildProcess[] = [];
/** The upstream processes (their event-loop delay under direct load is the baseline). */
let upstreams = { agent: 0, mcp: 0 };
let agentUrl = '';
/** The floor of a unified tools/call (floor-tools-call.ts): the spec's plain work with no layers, beside the bare proxy. */
let floor: { origin: string; pid: number } | undefined;
const FLOOR_CASE = 'unified tools/call';
const FLOOR_TOKEN = 'bench-floor-runtime-token';
/** The bare proxy in front of each upstream, by the upstream's origin. */
const bareProxies = new Map<string, { origin: string; pid: number }>();

/** A TypeScript entry of this package in its own process; resolves with the port it prints. */
async function startUpstream(
  file: string,
  probeDir: string,
  args: string[] = [],
): Promise<{ port: number; pid: number }> {
  // The event-loop probe runs in the upstreams too: their delay under direct load is the machine's baseline.
  const child = spawn(process.execPath, [`--import=${PROBE}`, '--import', 'tsx', join(HERE, file), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_PROBE_DIR: probeDir },
  });
  children.push(child);
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return { port: (JSON.parse(line) as { port: number }).port, pid: child.pid! };
}

/** The six services on one Redis or on a local Redis Cluster, seeded and measured; undefined (said why) when they cannot run here. */
async function runDistributed(
  redis: 'single' | 'cluster',
  mcpUrl: string,
  probeDir: string,
): Promise<Record<string, number> | undefined> {
  const distributed = await startDistributed({
    repo: REPO,
    probe: PROBE,
    probeDir,
    admin: ADMIN,
    profileEnv: profileEnv(redis === 'cluster' ? 'distributed-cluster' : 'distributed'),
    redis,
  });
  if (typeof distributed === 'string') {
    console.log(`\n== distributed (${redis === 'cluster' ? 'Redis Cluster' : 'one Redis'}): skipped (${distributed})`);
    return undefined;
  }
  try {
    return await runCases(
      distributed,
      casesFor(agentUrl, mcpUrl, await seed(distributed.base, ADMIN, { agent: agentUrl, mcp: mcpUrl })),
      probeDir,
    );
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
  return { BENCH_PROFILE_DIR: profileDirFor(topology), ...(options.heap ? { BENCH_PROFILE_HEAP: '1' } : {}) };
}

/** One profile directory per topology, so each summary reads its own processes. */
function profileDirFor(topology: string): string {
  const dir = join(options.profile!, topology);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The same request as a direct target, through the bare proxy in front of that upstream. */
function viaBare(t: Target): { target: Target; pid: number } {
  const url = new URL(t.url);
  const bare = bareProxies.get(url.origin)!;
  return { target: { ...t, url: `${bare.origin}${url.pathname}${url.search}` }, pid: bare.pid };
}

/** The same load as the measured run, unmeasured: JIT compilation, caches and pools warm up outside the figures. */
async function warmUp(t: Target): Promise<void> {
  await runLoad(t, CONNECTIONS, WARM_SECONDS);
}

/** The warm-up of a side whose CPU is measured: rounds of it until `pids`' CPU per call stops falling (`warm-up.ts`). */
async function warmUpSettled(t: Target, pids: readonly number[]): Promise<WarmUpReport> {
  return warmUntilSettled(async () => {
    const before = cpuSeconds(pids);
    const { total } = await runLoad(t, CONNECTIONS, WARM_SECONDS);
    return { calls: total, cpuSeconds: cpuSeconds(pids) - before };
  });
}

/** One measured window of the bare proxy: its CPU and calls (the warm-up was its reference run's). */
async function bareWindow(t: Target, seconds: number): Promise<BareWindow> {
  const bare = viaBare(t);
  const before = cpuSeconds([bare.pid]);
  const { total, errors, non2xx } = await runLoad(bare.target, CONNECTIONS, seconds);
  return { cpu: cpuSeconds([bare.pid]) - before, calls: total, failures: errors + non2xx };
}

/** One side's warm-up, for the report: its rounds and CPU per 1,000 calls in the first and last. */
const warmUpText = (r: WarmUpReport) =>
  `${r.rounds} rounds, ${fmt(r.first, 3)} → ${fmt(r.last, 3)}${r.settled ? '' : ' (still falling)'}`;

/** A case's reference runs; measured once for the cases that send the same request upstream. */
interface References {
  direct: { many: LoadResult; one: LoadResult };
  /** Its throughput and latency; its CPU is measured around each gateway window instead (bare-bracket.ts). */
  bare: { many: LoadResult; one: LoadResult; warmUp: WarmUpReport };
  /** The floor's CPU over its calls, for FLOOR_CASE only. */
  floor?: { cpu: number; total: number };
}

/** The case's request as the floor takes it: the direct request with the floor's runtime token. */
function viaFloor(t: Target, origin: string): Target {
  const url = new URL(t.url);
  return {
    url: `${origin}${url.pathname}`,
    headers: { ...t.headers, authorization: `Bearer ${FLOOR_TOKEN}` },
    body: t.body,
  };
}

/** The floor's CPU per call under the same load as the others, after its own warm-up. */
async function measureFloor(c: Case): Promise<References['floor']> {
  if (c.name !== FLOOR_CASE || !floor) return undefined;
  const target = viaFloor(c.direct, floor.origin);
  await warmUpSettled(target, [floor.pid]);
  const before = cpuSeconds([floor.pid]);
  const { total, errors, non2xx } = await runLoad(target, CONNECTIONS, SECONDS);
  if (errors + non2xx > 0) throw new Error(`the floor answered ${errors + non2xx} of ${total} calls with an error`);
  return { cpu: cpuSeconds([floor.pid]) - before, total };
}

/** Direct (with the upstream's event-loop delay, the baseline) and through the bare proxy (its throughput and latency), each after a warm-up. */
async function measureReferences(c: Case, probeDir: string, delays: string[]): Promise<References> {
  const upstream = c.direct.url.startsWith(agentUrl) ? upstreams.agent : upstreams.mcp;
  await warmUp(c.direct);
  await readProbes([upstream], probeDir);
  const many = await runLoad(c.direct, CONNECTIONS, SECONDS);
  const delay = worstDelay(await readProbes([upstream], probeDir));
  delays.push(`direct (${c.name}'s upstream, baseline): p50 ${delay.p50} ms, p99 ${delay.p99} ms, max ${delay.max} ms`);
  const one = await runLoad(c.direct, 1, ONE_CONNECTION_SECONDS);
  const bare = viaBare(c.direct);
  const bareWarmUp = await warmUpSettled(bare.target, [bare.pid]);
  const bareMany = await runLoad(bare.target, CONNECTIONS, SECONDS);
  const bareOne = await runLoad(bare.target, 1, ONE_CONNECTION_SECONDS);
  const floorCpu = await measureFloor(c);
  return {
    direct: { many, one },
    bare: { many: bareMany, one: bareOne, warmUp: bareWarmUp },
    ...(floorCpu ? { floor: floorCpu } : {}),
  };
}

/** Runs every case against one gateway and prints its table; returns rps per case (for the topology comparison). */
async function runCases(g: GatewayUnderTest, cases: Case[], probeDir: string): Promise<Record<string, number>> {
  const check = async (t: Target) => {
    for (let i = 0; i < 20; i++) {
      const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body });
      await res.text();
      if (res.status !== 200) throw new Error(`${t.url} answered ${res.status} while warming up`);
    }
  };
  for (const c of cases) {
    await check(c.direct);
    await check(viaBare(c.direct).target);
    await check(c.gateway(g));
  }
  const idleRss = g.servers().reduce((sum, pid) => sum + residentBytes(pid), 0);
  const treeIdleRss = g.pids().reduce((sum, pid) => sum + residentBytes(pid), 0);
  const settled = await settledResidentBytes(g.servers());
  const idleReports = await readProbes(g.servers(), probeDir);
  const workerThreads = new Set(idleReports.flatMap((r) => r.workerThreads));
  console.log(
    `\n== ${g.name}: ${CONNECTIONS} connections, ${SECONDS}s per case (1 connection: ${ONE_CONNECTION_SECONDS}s), each side after ${WARM_SECONDS}s warm-up rounds until its CPU per call stops falling`,
  );
  console.log(
    row(
      'case',
      COLUMNS.map(([title]) => title),
    ),
  );
  const rps: Record<string, number> = {};
  let loadedRss = 0;
  const delays: string[] = [];
  const collections: string[] = [];
  const endOfLoad: string[] = [];
  const threads: string[] = [];
  const byPart: string[] = [];
  const warmUps: string[] = [];
  const floors: string[] = [];
  const bareDrift: string[] = [];
  const referenceCache = new Map<string, References>();
  // Every case warmed once before any is measured: compiling the code the cases share (HTTP,
  // auth, the shell) would otherwise land in whichever case is measured first.
  for (const c of cases) await warmUp(c.gateway(g));
  for (const c of cases) {
    const key = `${c.direct.url} ${c.direct.body}`;
    const ref = referenceCache.get(key) ?? (await measureReferences(c, probeDir, delays));
    referenceCache.set(key, ref);
    const target = c.gateway(g);
    const pids = g.pids();
    const warmed = await warmUpSettled(target, pids);
    warmUps.push(`${c.name}: gateway ${warmUpText(warmed)}; bare proxy ${warmUpText(ref.bare.warmUp)}`);
    const bareBefore = await bareWindow(c.direct, BARE_WINDOW_SECONDS);
    await readProbes(g.servers(), probeDir);
    const cpuBefore = cpuSeconds(pids);
    const threadsBefore = readThreads(g.servers());
    const parts = g.parts();
    const partsBefore = readParts(parts);
    const many = await runLoad(target, CONNECTIONS, SECONDS);
    const cpu = cpuSeconds(pids) - cpuBefore;
    const partsAfter = g.parts();
    const partsRead = readParts(partsAfter);
    const threadsAfter = readThreads(g.servers());
    const loaded = await readProbes(g.servers(), probeDir);
    const bareK = bracket(bareBefore, await bareWindow(c.direct, BARE_WINDOW_SECONDS));
    bareDrift.push(`${c.name}: ${fmt(bareK.before, 3)} before, ${fmt(bareK.after, 3)} after`);
    if (parts.length > 1)
      byPart.push(partsLine(c.name, partsBefore, partsRead, partsAfter, many.total, bareK.perThousand));
    threads.push(threadLine(c.name, splitThreadCpu(threadsBefore, threadsAfter, workerThreads), many.total));
    const delay = worstDelay(loaded);
    collections.push(gcLine(c.name, loaded, many.total));
    endOfLoad.push(`${c.name}: ${memorySplit(loaded)}`);
    loadedRss = Math.max(
      loadedRss,
      g.servers().reduce((sum, pid) => sum + residentBytes(pid), 0),
    );
    const one = await runLoad(target, 1, ONE_CONNECTION_SECONDS);
    rps[c.name] = many.rps;
    delays.push(`${c.name}: p50 ${delay.p50} ms, p99 ${delay.p99} ms, max ${delay.max} ms`);
    const { direct, bare } = ref;
    if (ref.floor) {
      const [gateway, floorK] = [perThousand(cpu, many.total), perThousand(ref.floor.cpu, ref.floor.total)];
      floors.push(
        `${c.name}: floor ${fmt(floorK, 3)} (${fmt(floorK / bareK.perThousand, 1)}× bare); the gateway ${fmt(gateway / floorK, 1)}× the floor`,
      );
    }
    console.log(
      row(c.name, [
        fmt(direct.many.rps),
        fmt(many.rps),
        fmt(many.rps / direct.many.rps, 3),
        fmt(bare.many.rps),
        fmt(many.rps / bare.many.rps, 3),
        `${direct.many.p50}/${many.p50}`,
        `${direct.many.p99}/${many.p99}`,
        fmt(perThousand(cpu, many.total), 3),
        fmt(bareK.perThousand, 3),
        fmt(perThousand(cpu, many.total) / bareK.perThousand, 1),
        `${fmt(one.p50 - direct.one.p50, 2)}/${fmt(one.p99 - direct.one.p99, 2)}`,
        `${fmt(bare.one.p50 - direct.one.p50, 2)}/${fmt(bare.one.p99 - direct.one.p99, 2)}`,
        String(many.errors + many.non2xx + one.errors + one.non2xx),
      ]),
    );
    const bareErrors = bare.many.errors + bare.many.non2xx + bare.one.errors + bare.one.non2xx + bareK.failures;
    if (bareErrors > 0) console.log(`  (the bare proxy had ${bareErrors} errors on this request)`);
  }
  console.log(`warm-up, CPU-s per 1,000 calls in the first and last round:\n  ${warmUps.join('\n  ')}`);
  console.log(
    `the bare proxy's CPU-s per 1,000 calls in its windows just before and after each gateway window (together the table's "bare CPU-s/1k"; apart, the machine's drift):\n  ${bareDrift.join('\n  ')}`,
  );
  if (floors.length > 0)
    console.log(
      `CPU-s per 1,000 calls of the floor (floor-tools-call.ts: the spec's plain allowed call, no layers, its audit records handed to a worker that writes nothing):\n  ${floors.join('\n  ')}`,
    );
  console.log(
    `CPU-s per 1,000 calls by thread of the gateway's node process(es) (the wrappers' share of the table's figure is not in them):\n  ${threads.join('\n  ')}`,
  );
  if (byPart.length > 0)
    console.log(
      `CPU-s per 1,000 calls by process (× the bare proxy's; the table's figure is the services and the router):\n  ${byPart.join('\n  ')}`,
    );
  console.log(
    `event-loop delay beyond the 1 ms sampling interval, under load (${CONNECTIONS} connections):\n  ${delays.join('\n  ')}`,
  );
  console.log(
    `garbage collection on the gateway's main thread(s) under load (pauses of the event loop):\n  ${collections.join('\n  ')}`,
  );
  console.log(
    `resident memory: gateway process idle ${fmt(idleRss / MB)} MB right after its start, ${fmt(settled.bytes / MB)} MB once settled (${fmt(settled.afterMs / 1000, 0)} s later), ` +
      `loaded ${fmt(loadedRss / MB)} MB; all its processes (wrappers included) idle ${fmt(treeIdleRss / MB)} MB`,
  );
  console.log(memoryLine(idleReports));
  console.log(`memory of the gateway's node process(es) at the end of each case's load:\n  ${endOfLoad.join('\n  ')}`);
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
  upstreams = { agent: agentRuntime.pid, mcp: mcpUpstream.pid };
  agentUrl = `http://127.0.0.1:${agentRuntime.port}/run`;
  const mcpUrl = `http://127.0.0.1:${mcpUpstream.port}/mcp`;
  for (const upstream of [agentRuntime, mcpUpstream]) {
    const origin = `http://127.0.0.1:${upstream.port}`;
    const bare = await startUpstream('bare-proxy.ts', probeDir, [origin]);
    bareProxies.set(origin, { origin: `http://127.0.0.1:${bare.port}`, pid: bare.pid });
  }
  const floorServer = await startUpstream('floor-tools-call.ts', probeDir, [mcpUrl, FLOOR_TOKEN]);
  floor = { origin: `http://127.0.0.1:${floorServer.port}`, pid: floorServer.pid };
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
    single = await runCases(allInOne, casesFor(agentUrl, mcpUrl, seeded), probeDir);
  } finally {
    await allInOne.stop();
  }
  if (!options['no-distributed']) {
    const kinds = options['redis-cluster'] ? (['single', 'cluster'] as const) : (['single'] as const);
    const byRedis = new Map<string, Record<string, number>>();
    for (const redis of kinds) {
      const rps = await runDistributed(redis, mcpUrl, probeDir);
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
    for (const topology of readdirSync(options.profile))
      console.log(
        `\n${topology}: ${(options.heap ? summariseHeapProfiles : summariseProfiles)(join(options.profile, topology), 15)}`,
      );
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
