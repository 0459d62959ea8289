import { describe, expect, it } from 'vitest';
import type { ProbeReport } from './probe-reports.js';
import type { LoadResult } from './load-run.js';
import {
  caseRow,
  COLUMNS,
  gcLine,
  memoryLine,
  memorySplit,
  partsLine,
  perThousand,
  readParts,
  row,
  threadLine,
} from './report-lines.js';

const MiB = 1024 * 1024;

describe('report lines', () => {
  it('puts each cell right-aligned under its column after a padded case name', () => {
    const cells = COLUMNS.map((_, i) => String(i));
    const line = row('invoke', cells);
    expect(line.startsWith('invoke'.padEnd(22) + ' ')).toBe(true);
    expect(line.length).toBe(23 + COLUMNS.reduce((sum, [, width]) => sum + width, 0) + 2 * (COLUMNS.length - 1));
    const last = String(COLUMNS.length - 1);
    expect(line.endsWith(' '.repeat(COLUMNS.at(-1)![1] - last.length) + last)).toBe(true);
  });

  it("fills a case's row from its runs: ratios, the latency added at one connection, the gateway's failures", () => {
    const run = (rps: number, p50: number, p99: number, errors = 0): LoadResult => ({
      rps,
      p50,
      p99,
      errors,
      non2xx: 0,
      total: rps * 5,
    });
    const line = caseRow('invoke', {
      direct: { many: run(4000, 3, 9), one: run(900, 1, 2) },
      bare: { many: run(2000, 6, 15), one: run(600, 1.5, 3) },
      gateway: { many: run(1000, 14, 40, 2), one: run(300, 3, 6, 1) },
      cpuK: 0.45,
      bareK: 0.15,
    });
    const cells = line
      .slice(23)
      .trim()
      .split(/\s{2,}/);
    expect(cells).toEqual([
      '4000',
      '1000',
      '0.250',
      '2000',
      '0.500',
      '3/14',
      '9/40',
      '0.450',
      '0.150',
      '3.0',
      '2.00/4.00',
      '0.50/1.00',
      '3',
    ]);
  });

  it('gives CPU per 1,000 calls, never dividing by zero calls', () => {
    expect(perThousand(0.5, 2_000)).toBe(0.25);
    expect(perThousand(0.5, 0)).toBe(500);
  });

  it('splits a case by kind of thread, per 1,000 calls and as shares', () => {
    expect(threadLine('unified tools/call', { main: 0.6, workers: 0.3, other: 0.1 }, 2_000)).toBe(
      'unified tools/call: main thread 0.300 (60%), worker threads 0.150 (30%), other threads 0.050 (10%)',
    );
  });

  it('splits the idle memory into the main heap, its buffers and the rest', () => {
    const report = (rss: number, heapTotal: number, heapUsed: number, external: number): ProbeReport => ({
      pid: 1,
      rss: rss * MiB,
      memory: {
        rss: rss * MiB,
        heapTotal: heapTotal * MiB,
        heapUsed: heapUsed * MiB,
        external: external * MiB,
        arrayBuffers: 0,
      },
      workerThreads: [],
      delay: { p50: 0, p99: 0, max: 0 },
      gc: {},
    });
    expect(memoryLine([report(200, 56, 49, 5)])).toContain(
      'RSS 200 MB = main-thread V8 heap 56 MB (49 MB used) + its external/array buffers 5 MB + the rest 139 MB',
    );
    // Several processes (the distributed services) are summed.
    expect(memorySplit([report(200, 56, 49, 5), report(100, 20, 10, 1)])).toBe(
      'RSS 300 MB = main-thread V8 heap 76 MB (59 MB used) + its external/array buffers 6 MB + the rest 218 MB',
    );
  });

  it("sums the main threads' collections of one case per 1,000 calls, with the longest pause of each kind", () => {
    const base = { rss: 0, memory: {} as NodeJS.MemoryUsage, workerThreads: [], delay: { p50: 0, p99: 0, max: 0 } };
    const reports: ProbeReport[] = [
      { ...base, pid: 1, gc: { minor: { count: 30, ms: 60, maxMs: 4.5 }, major: { count: 1, ms: 5, maxMs: 5 } } },
      {
        ...base,
        pid: 2,
        gc: { minor: { count: 10, ms: 20, maxMs: 7.25 }, incremental: { count: 2, ms: 1, maxMs: 0.5 } },
      },
    ];
    expect(gcLine('invoke', reports, 2_000)).toBe(
      'invoke: 40 scavenges, 40.0 ms per 1,000 calls, longest 7.3 ms; 3 full collections and steps, 3.0 ms per 1,000 calls, longest 5.0 ms',
    );
    expect(gcLine('idle', [{ ...base, pid: 3, gc: {} }], 1_000)).toBe(
      'idle: 0 scavenges, 0.0 ms per 1,000 calls, longest 0.0 ms; 0 full collections and steps, 0.0 ms per 1,000 calls, longest 0.0 ms',
    );
  });

  it("reads each part's CPU between two readings (not what it used after the second), × bare, and the whole with the shared servers", () => {
    const parts = [
      { name: 'this process', pids: [process.pid] },
      { name: 'gone', pids: [2 ** 22 + 1] },
    ];
    const before = readParts(parts);
    const started = process.cpuUsage();
    while (process.cpuUsage(started).user < 50_000); // ~50 ms of CPU on this process
    const after = readParts(parts);
    const later = process.cpuUsage();
    while (process.cpuUsage(later).user < 100_000); // ~100 ms more, after the second reading
    const line = partsLine('case', before, after, parts, 1_000, 0.05);
    const match =
      /^case: this process ([0-9.]+) \(([0-9.]+)×\), gone 0\.000 \(0\.0×\); the whole topology with PostgreSQL and Redis ([0-9.]+) \(/.exec(
        line,
      );
    expect(match, line).not.toBeNull();
    const [, own, times, whole] = match!;
    expect(Number(own)).toBeGreaterThanOrEqual(0.04);
    // Exactly what the two readings hold (per 1,000 calls over 1,000 calls: seconds), none of the later ~100 ms.
    const between = after.get('this process')!.get(process.pid)! - before.get('this process')!.get(process.pid)!;
    expect(Number(own)).toBeCloseTo(between, 3);
    // The later CPU happened: a line read at its own time would have counted it.
    const since =
      readParts(parts).get('this process')!.get(process.pid)! - after.get('this process')!.get(process.pid)!;
    expect(since).toBeGreaterThan(0.09);
    expect(Number(times)).toBeCloseTo(Number(own) / 0.05, 0);
    expect(whole).toBe(own);
  });
});
