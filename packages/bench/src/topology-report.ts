/**
 * What a topology's run prints after its table: the lines each case adds (warm-up, the bare
 * proxy's failures and drift, the floor, CPU by thread and by process, event-loop delay, garbage collection,
 * memory at the end of its load) and the topology's resident memory. Collected while the cases
 * run and printed together, so the table stays one block.
 */
import type { ProbeReport } from './probe-reports.js';
import type { SettledResidentBytes } from './process-stats.js';
import { fmt, MB, memoryLine } from './report-lines.js';

/** The lines each case adds, by kind; a kind with no line (no floor, one process) is left out. */
export interface TopologyLines {
  warmUps: string[];
  bareErrors: string[];
  bareDrift: string[];
  floors: string[];
  threads: string[];
  byPart: string[];
  delays: string[];
  collections: string[];
  endOfLoad: string[];
}

/** A topology's resident memory: idle right after its start, once settled, the most under load. */
export interface TopologyMemory {
  idleRss: number;
  treeIdleRss: number;
  settled: SettledResidentBytes;
  loadedRss: number;
  idleReports: readonly ProbeReport[];
}

/** No lines yet: one per topology run. */
export const noLines = (): TopologyLines => ({
  warmUps: [],
  bareErrors: [],
  bareDrift: [],
  floors: [],
  threads: [],
  byPart: [],
  delays: [],
  collections: [],
  endOfLoad: [],
});

/** The lines under a topology's table, in the order a reader checks them. */
export function topologyReport(lines: TopologyLines, memory: TopologyMemory, connections: number): string[] {
  const block = (title: string, items: string[]) => (items.length > 0 ? [`${title}:\n  ${items.join('\n  ')}`] : []);
  return [
    ...block('warm-up, CPU-s per 1,000 calls in the first and last round', lines.warmUps),
    ...block("the bare proxy's failed requests by case (a reference that failed is less sure)", lines.bareErrors),
    ...block(
      `the bare proxy's CPU-s per 1,000 calls in its windows just before and after each gateway window (together the table's "bare CPU-s/1k"; apart, the machine's drift)`,
      lines.bareDrift,
    ),
    ...block(
      "CPU-s per 1,000 calls of the floor (floor-tools-call.ts: the spec's plain allowed call, no layers, its audit records handed to a worker that writes nothing)",
      lines.floors,
    ),
    ...block(
      "CPU-s per 1,000 calls by thread of the gateway's node process(es) (the wrappers' share of the table's figure is not in them)",
      lines.threads,
    ),
    ...block(
      "CPU-s per 1,000 calls by process (× the bare proxy's; the table's figure is the services and the router)",
      lines.byPart,
    ),
    ...block(
      `event-loop delay beyond the 1 ms sampling interval, under load (${connections} connections)`,
      lines.delays,
    ),
    ...block(
      "garbage collection on the gateway's main thread(s) under load (pauses of the event loop)",
      lines.collections,
    ),
    `resident memory: gateway process idle ${fmt(memory.idleRss / MB)} MB right after its start, ${fmt(memory.settled.bytes / MB)} MB ${settledWhen(memory.settled)}, ` +
      `loaded ${fmt(memory.loadedRss / MB)} MB; all its processes (wrappers included) idle ${fmt(memory.treeIdleRss / MB)} MB`,
    memoryLine(memory.idleReports),
    ...block("memory of the gateway's node process(es) at the end of each case's load", lines.endOfLoad),
  ];
}

/** When the settled reading was taken, or that memory never fell (then it is not a settled figure). */
const settledWhen = (s: SettledResidentBytes): string =>
  s.fell
    ? `once settled (${fmt(s.afterMs / 1000, 0)} s later)`
    : 'at its lowest, not settled (no fall within the wait)';
