/**
 * The bench's report lines: the table's columns and rows, the per-thread and per-process CPU
 * lines, the idle memory split. Formatting only; the readings come from process-stats.ts,
 * thread-cpu-split.ts and probe-reports.ts.
 */
import type { ProcessPart } from './gateway-under-test.js';
import type { LoadResult } from './load-run.js';
import type { ProbeReport } from './probe-reports.js';
import { cpuSeconds } from './process-stats.js';
import type { ThreadCpu } from './thread-cpu-split.js';

/** Bytes in a mebibyte, as the memory lines print them. */
export const MB = 1024 * 1024;
/** A figure with a fixed number of digits. */
export const fmt = (n: number, digits = 0) => n.toFixed(digits);
/** CPU seconds per 1,000 calls (never divided by zero). */
export const perThousand = (cpu: number, calls: number) => (cpu / Math.max(1, calls)) * 1000;
/** The table's columns after the case name: title and width. */
export const COLUMNS: [title: string, width: number][] = [
  ['direct req/s', 12],
  ['gateway req/s', 13],
  ['× direct', 8],
  ['bare req/s', 10],
  ['× bare', 6],
  ['p50 ms d/g', 10],
  ['p99 ms d/g', 11],
  ['CPU-s/1k calls', 14],
  ['bare CPU-s/1k', 13],
  ['CPU × bare', 10],
  ['added p50/p99 ms @1 conn', 24],
  ['bare added @1 conn', 18],
  ['errors', 6],
];
/** One row of the table: the case name, then each cell right-aligned under its column. */
export const row = (name: string, cells: string[]) =>
  `${name.padEnd(22)} ${cells.map((cell, i) => cell.padStart(COLUMNS[i]![1])).join('  ')}`;

/** A case's runs at many connections and at one. */
export interface RunPair {
  many: LoadResult;
  one: LoadResult;
}

/** What one case's row is made of: the references' runs, the gateway's, and the CPU per 1,000 calls of the gateway and of the bare proxy around it. */
export interface CaseFigures {
  direct: RunPair;
  bare: RunPair;
  gateway: RunPair;
  cpuK: number;
  bareK: number;
}

/** One case's row of the table, its cells in COLUMNS' order. */
export function caseRow(name: string, { direct, bare, gateway, cpuK, bareK }: CaseFigures): string {
  const added = (side: RunPair) => `${fmt(side.one.p50 - direct.one.p50, 2)}/${fmt(side.one.p99 - direct.one.p99, 2)}`;
  const failures = (side: RunPair) => side.many.errors + side.many.non2xx + side.one.errors + side.one.non2xx;
  return row(name, [
    fmt(direct.many.rps),
    fmt(gateway.many.rps),
    fmt(gateway.many.rps / direct.many.rps, 3),
    fmt(bare.many.rps),
    fmt(gateway.many.rps / bare.many.rps, 3),
    `${direct.many.p50}/${gateway.many.p50}`,
    `${direct.many.p99}/${gateway.many.p99}`,
    fmt(cpuK, 3),
    fmt(bareK, 3),
    fmt(cpuK / bareK, 1),
    added(gateway),
    added(bare),
    String(failures(gateway)),
  ]);
}

/** One case's CPU per kind of thread of the gateway's node processes, per 1,000 calls and as shares. */
export function threadLine(name: string, split: ThreadCpu, calls: number): string {
  const total = split.main + split.workers + split.other;
  const part = (label: string, cpu: number) =>
    `${label} ${fmt(perThousand(cpu, calls), 3)} (${fmt((cpu / Math.max(total, 1e-9)) * 100)}%)`;
  return `${name}: ${part('main thread', split.main)}, ${part('worker threads', split.workers)}, ${part('other threads', split.other)}`;
}

/** CPU seconds so far per process of each part, read before and after a run. */
export type PartReadings = Map<string, Map<number, number>>;

/** Each part's processes' CPU seconds so far. */
export function readParts(parts: readonly ProcessPart[]): PartReadings {
  return new Map(parts.map((p) => [p.name, new Map(p.pids.map((pid) => [pid, cpuSeconds([pid])]))]));
}

/**
 * One case's CPU per part of a topology per 1,000 calls, × the bare proxy's, and the whole with
 * the shared servers: a process that started during the run counts whole, one that ended is lost.
 */
export function partsLine(
  name: string,
  before: PartReadings,
  after: PartReadings,
  parts: readonly ProcessPart[],
  calls: number,
  bare: number,
) {
  const used = parts.map((p) => {
    const earlier = before.get(p.name);
    const later = after.get(p.name);
    const cpu = p.pids.reduce((sum, pid) => sum + (later?.get(pid) ?? 0) - (earlier?.get(pid) ?? 0), 0);
    return { ...p, perK: perThousand(cpu, calls) };
  });
  const cell = (label: string, perK: number) => `${label} ${fmt(perK, 3)} (${fmt(perK / Math.max(bare, 1e-9), 1)}×)`;
  const whole = used.reduce((sum, p) => sum + p.perK, 0);
  return (
    `${name}: ${used.map((p) => cell(p.shared ? `${p.name} (shared)` : p.name, p.perK)).join(', ')}; ` +
    `the whole topology with PostgreSQL and Redis ${cell('', whole).trim()}`
  );
}

/** The idle gateway's resident memory, split by what its main thread's process.memoryUsage() can tell. */
export function memoryLine(reports: readonly ProbeReport[]): string {
  return (
    `idle memory of the gateway's node process(es), from the main thread's process.memoryUsage(): ${memorySplit(reports)} ` +
    "(worker threads' heaps, the embedded database's WebAssembly memory, code, native allocations)"
  );
}

/** RSS of the probed processes split into the main threads' V8 heaps, their external memory and the rest: where a process's memory is. */
export function memorySplit(reports: readonly ProbeReport[]): string {
  const sum = (pick: (r: ProbeReport) => number) => reports.reduce((total, r) => total + pick(r), 0) / MB;
  const rss = sum((r) => r.memory.rss);
  const heap = sum((r) => r.memory.heapTotal);
  const external = sum((r) => r.memory.external);
  return (
    `RSS ${fmt(rss)} MB = main-thread V8 heap ${fmt(heap)} MB (${fmt(sum((r) => r.memory.heapUsed))} MB used) ` +
    `+ its external/array buffers ${fmt(external)} MB + the rest ${fmt(rss - heap - external)} MB`
  );
}

/**
 * The main threads' garbage collection during one case's load, per 1,000 calls: young-generation
 * scavenges (each a pause of the event loop: the longest is what the delay's tail shows) and
 * full collections (major and incremental steps together).
 */
export function gcLine(name: string, reports: readonly ProbeReport[], calls: number): string {
  const of = (kinds: readonly (keyof ProbeReport['gc'])[]) => {
    const seen = reports.flatMap((r) => kinds.map((k) => r.gc[k]).filter((g) => g !== undefined));
    return {
      count: seen.reduce((sum, g) => sum + g.count, 0),
      perK: perThousand(
        seen.reduce((sum, g) => sum + g.ms, 0),
        calls,
      ),
      longest: Math.max(0, ...seen.map((g) => g.maxMs)),
    };
  };
  const minor = of(['minor']);
  const full = of(['major', 'incremental']);
  return (
    `${name}: ${minor.count} scavenges, ${fmt(minor.perK, 1)} ms per 1,000 calls, longest ${fmt(minor.longest, 1)} ms; ` +
    `${full.count} full collections and steps, ${fmt(full.perK, 1)} ms per 1,000 calls, longest ${fmt(full.longest, 1)} ms`
  );
}
