/**
 * The sides a gateway case is measured against, each on the same load plan: the upstream called
 * directly (the latency baseline and its event-loop delay), the bare node:http + undici proxy in
 * front of it (throughput, latency and, around each gateway window, the CPU baseline) and, for
 * one case, the floor (floor-tools-call.ts: the spec's plain work with no layers).
 */
import type { Case, Target } from './bench-cases.js';
import type { BareWindow } from './bare-bracket.js';
import { cpuOver, runLoad } from './load-run.js';
import { readProbes, worstDelay } from './probe-reports.js';
import { fmt, perThousand, type RunPair } from './report-lines.js';
import { warmUntilSettled, type WarmUpReport } from './warm-up.js';

/** How long and how wide every run is. */
export interface LoadPlan {
  connections: number;
  seconds: number;
  oneConnectionSeconds: number;
  /** One round of unmeasured load before a measured run; repeated until the CPU per call settles (`warm-up.ts`). */
  warmSeconds: number;
  /** Each of the bare proxy's two windows around a gateway window: together as long as the gateway's. */
  bareWindowSeconds: number;
}

/** The plan from the environment (BENCH_SECONDS, BENCH_WARM_SECONDS, BENCH_CONNECTIONS) and --quick. */
export function loadPlan(env: NodeJS.ProcessEnv, quick: boolean): LoadPlan {
  const seconds = Number(env.BENCH_SECONDS ?? (quick ? 3 : 8));
  return {
    connections: Number(env.BENCH_CONNECTIONS ?? 16),
    seconds,
    oneConnectionSeconds: Math.max(2, Math.round(seconds / 2)),
    warmSeconds: Number(env.BENCH_WARM_SECONDS ?? 2),
    bareWindowSeconds: Math.max(2, seconds / 2),
  };
}

/** A process serving HTTP: its origin and pid. */
export interface Served {
  origin: string;
  pid: number;
}

/** The reference processes of one bench run. */
export interface Sides {
  plan: LoadPlan;
  probeDir: string;
  /** The agent runtime's URL (a case whose direct URL starts with it has the agent runtime upstream) and the upstreams' pids. */
  upstreams: { agentUrl: string; agent: number; mcp: number };
  /** The bare proxy in front of each upstream, by the upstream's origin. */
  bareProxies: ReadonlyMap<string, Served>;
  /** The floor of one case, reached with its own runtime token. */
  floor?: Served & { caseName: string; token: string };
}

/** The same request as a direct target, through the bare proxy in front of that upstream. */
export function viaBare(t: Target, sides: Sides): { target: Target; pid: number } {
  const url = new URL(t.url);
  const bare = sides.bareProxies.get(url.origin)!;
  return { target: { ...t, url: `${bare.origin}${url.pathname}${url.search}` }, pid: bare.pid };
}

/** The same load as the measured run, unmeasured: JIT compilation, caches and pools warm up outside the figures. */
export async function warmUp(t: Target, plan: LoadPlan): Promise<void> {
  await runLoad(t, plan.connections, plan.warmSeconds);
}

/** The warm-up of a side whose CPU is measured: rounds of it until `pids`' CPU per call stops falling (`warm-up.ts`). */
export async function warmUpSettled(t: Target, pids: readonly number[], plan: LoadPlan): Promise<WarmUpReport> {
  return warmUntilSettled(async () => {
    const { load, cpu } = await cpuOver(t, pids, plan.connections, plan.warmSeconds);
    return { calls: load.total, cpuSeconds: cpu };
  });
}

/** One measured window of the bare proxy: its CPU and calls (the warm-up was its reference run's). */
export async function bareWindow(t: Target, sides: Sides): Promise<BareWindow> {
  const bare = viaBare(t, sides);
  const { plan } = sides;
  const { load, cpu } = await cpuOver(bare.target, [bare.pid], plan.connections, plan.bareWindowSeconds);
  return { cpu, calls: load.total, failures: load.errors + load.non2xx };
}

/** One side's warm-up, for the report: its rounds and CPU per 1,000 calls in the first and last. */
export const warmUpText = (r: WarmUpReport) =>
  `${r.rounds} rounds, ${fmt(r.first, 3)} → ${fmt(r.last, 3)}${r.settled ? '' : ' (still falling)'}`;

/** A case's reference runs; measured once for the cases that send the same request upstream. */
export interface References {
  direct: RunPair;
  /** Its throughput and latency; its CPU is measured around each gateway window instead (bare-bracket.ts). */
  bare: RunPair & { warmUp: WarmUpReport };
  /** The floor's CPU per 1,000 calls, for the floor's case only. */
  floorK?: number;
}

/** The case's request as the floor takes it: the direct request with the floor's runtime token. */
function viaFloor(t: Target, origin: string, token: string): Target {
  const url = new URL(t.url);
  return {
    url: `${origin}${url.pathname}`,
    headers: { ...t.headers, authorization: `Bearer ${token}` },
    body: t.body,
  };
}

/**
 * A window of load on a reference process with its event-loop delay read around it (its probe's
 * window starts at the first read): the upstream's is the machine's baseline; the bare proxy's and
 * the floor's say what the same load leaves of the 5 ms aim in a process that does less than the
 * gateway, on this machine.
 */
async function delayOver<T>(
  pid: number,
  label: string,
  { probeDir }: Sides,
  delays: string[],
  run: () => Promise<T>,
): Promise<T> {
  await readProbes([pid], probeDir);
  const result = await run();
  const delay = worstDelay(await readProbes([pid], probeDir));
  delays.push(`${label}: p50 ${delay.p50} ms, p99 ${delay.p99} ms, max ${delay.max} ms`);
  return result;
}

/** The floor's CPU per 1,000 calls under the same load as the others, after its own warm-up; its event-loop delay beside the others'. */
async function measureFloor(c: Case, sides: Sides, delays: string[]): Promise<number | undefined> {
  const { floor, plan } = sides;
  if (!floor || c.name !== floor.caseName) return undefined;
  const target = viaFloor(c.direct, floor.origin, floor.token);
  await warmUpSettled(target, [floor.pid], plan);
  const { load, cpu } = await delayOver(floor.pid, `floor (${c.name}, reference)`, sides, delays, () =>
    cpuOver(target, [floor.pid], plan.connections, plan.seconds),
  );
  const failures = load.errors + load.non2xx;
  if (failures > 0) throw new Error(`the floor answered ${failures} of ${load.total} calls with an error`);
  return perThousand(cpu, load.total);
}

/** Direct (with the upstream's event-loop delay, the baseline) and through the bare proxy (its throughput and latency), each after a warm-up. */
export async function measureReferences(c: Case, sides: Sides, delays: string[]): Promise<References> {
  const { plan, upstreams } = sides;
  const upstream = c.direct.url.startsWith(upstreams.agentUrl) ? upstreams.agent : upstreams.mcp;
  await warmUp(c.direct, plan);
  const many = await delayOver(upstream, `direct (${c.name}'s upstream, baseline)`, sides, delays, () =>
    runLoad(c.direct, plan.connections, plan.seconds),
  );
  const one = await runLoad(c.direct, 1, plan.oneConnectionSeconds);
  const bare = viaBare(c.direct, sides);
  const bareWarmUp = await warmUpSettled(bare.target, [bare.pid], plan);
  const bareMany = await delayOver(bare.pid, `bare proxy (${c.name}, reference)`, sides, delays, () =>
    runLoad(bare.target, plan.connections, plan.seconds),
  );
  const bareOne = await runLoad(bare.target, 1, plan.oneConnectionSeconds);
  const floorK = await measureFloor(c, sides, delays);
  return {
    direct: { many, one },
    bare: { many: bareMany, one: bareOne, warmUp: bareWarmUp },
    ...(floorK === undefined ? {} : { floorK }),
  };
}
