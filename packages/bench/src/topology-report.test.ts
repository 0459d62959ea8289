import { describe, expect, it } from 'vitest';
import { noLines, topologyReport, type TopologyMemory } from './topology-report.js';

const MiB = 1024 * 1024;
const memory: TopologyMemory = {
  idleRss: 150 * MiB,
  treeIdleRss: 160 * MiB,
  settled: { bytes: 140 * MiB, afterMs: 20_000, fell: true },
  loadedRss: 250 * MiB,
  idleReports: [],
};

describe('topology report', () => {
  it('prints a kind of line only when a case added one', () => {
    const text = topologyReport(noLines(), memory, 16).join('\n');
    expect(text).not.toContain('failed requests');
    expect(text).not.toContain('warm-up');
    expect(text).toContain('loaded 250 MB');
  });

  it("prints the bare proxy's failures in their own block, not among the warm-up lines", () => {
    const lines = noLines();
    lines.warmUps.push('invoke: gateway 0.3 → 0.2; bare proxy 0.1 → 0.1');
    lines.bareErrors.push('invoke: 3 failed requests');
    const blocks = topologyReport(lines, memory, 16);
    const warmUp = blocks.find((b) => b.startsWith('warm-up'));
    const failures = blocks.find((b) => b.startsWith("the bare proxy's failed requests"));
    expect(warmUp).not.toContain('failed');
    expect(failures).toBe(
      "the bare proxy's failed requests by case (a reference that failed is less sure):\n  invoke: 3 failed requests",
    );
  });

  it('says when idle memory never fell instead of calling its reading settled', () => {
    expect(topologyReport(noLines(), memory, 16).join('\n')).toContain('140 MB once settled (20 s later)');
    const unsettled = topologyReport(
      noLines(),
      { ...memory, settled: { bytes: 190 * MiB, afterMs: 0, fell: false } },
      16,
    );
    const text = unsettled.join('\n');
    expect(text).toContain('190 MB at its lowest, not settled (no fall within the wait)');
    expect(text).not.toContain('once settled');
  });
});
