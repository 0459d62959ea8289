import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  commandOf,
  cpuSeconds,
  processesNamed,
  processTree,
  residentBytes,
  runsNode,
  settledResidentBytes,
  threadCpuSeconds,
} from './process-stats.js';

describe('process stats from /proc', () => {
  it('finds a child in the tree and reads its CPU time and resident memory', async () => {
    // Spins until it has used 0.3 s of CPU by its own account, then says so and idles.
    const child = spawn(process.execPath, [
      '-e',
      'while (process.cpuUsage().user < 300000); console.log("spun"); setTimeout(() => {}, 60000)',
    ]);
    const spawnedShell = spawn('sleep', ['60']);
    try {
      await once(child.stdout, 'data');
      const tree = processTree(process.pid);
      expect(tree[0]).toBe(process.pid);
      expect(tree).toContain(child.pid);
      // Node 24 names its main thread `MainThread`, the command name up to 22 is `node`: the executable tells either.
      expect(runsNode(child.pid!)).toBe(true);
      expect(runsNode(spawnedShell.pid!)).toBe(false);
      expect(processesNamed([commandOf(child.pid!)])).toContain(child.pid);
      expect(processesNamed(['no-such-command'])).toEqual([]);
      expect(cpuSeconds([child.pid!])).toBeGreaterThanOrEqual(0.29);
      expect(threadCpuSeconds(child.pid!).get(child.pid!)).toBeGreaterThanOrEqual(0.29);
      expect(residentBytes(child.pid!)).toBeGreaterThan(10 * 1024 * 1024);
    } finally {
      child.kill('SIGTERM');
      spawnedShell.kill('SIGTERM');
      await Promise.all([once(child, 'exit'), once(spawnedShell, 'exit')]);
    }
  });

  it('reads resident memory until it stops falling, within the bound', async () => {
    const settled = await settledResidentBytes([process.pid], { everyMs: 5, steadyMs: 20, maxMs: 200 });
    expect(settled.bytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(settled.bytes).toBeLessThanOrEqual(residentBytes(process.pid) + 1024 * 1024);
    const bounded = await settledResidentBytes([2 ** 22 + 7], { everyMs: 5, steadyMs: 50, maxMs: 20 });
    expect(bounded).toEqual({ bytes: 0, afterMs: 0, fell: false });
  });

  it('waits past a steady start for the fall, then for the steady window after it', async () => {
    const MiB = 1024 * 1024;
    // Flat for the first ten readings (longer than steadyMs), then the reducer's fall, then flat.
    const readings = [...Array<number>(10).fill(190 * MiB), 175 * MiB, 160 * MiB, ...Array<number>(40).fill(160 * MiB)];
    let at = 0;
    const read = () => readings[Math.min(at++, readings.length - 1)]!;
    const settled = await settledResidentBytes([], { everyMs: 2, steadyMs: 20, maxMs: 2_000, read });
    expect(settled.bytes).toBe(160 * MiB);
    expect(settled.fell).toBe(true);
    expect(settled.afterMs).toBeGreaterThan(0);
    // Ended by the steady window after the fall, not by the bound.
    expect(at).toBeLessThan(readings.length);
    let flatReads = 0;
    const flat = await settledResidentBytes([], {
      everyMs: 2,
      steadyMs: 5,
      maxMs: 40,
      read: () => (flatReads++, 150 * MiB),
    });
    expect(flat).toEqual({ bytes: 150 * MiB, afterMs: 0, fell: false });
    expect(flatReads).toBeGreaterThan(5);
  });

  it('reads nothing for a process that is gone', () => {
    expect(processTree(2 ** 22 + 7)).toEqual([]);
    expect(cpuSeconds([2 ** 22 + 7])).toBe(0);
    expect(residentBytes(2 ** 22 + 7)).toBe(0);
    expect(threadCpuSeconds(2 ** 22 + 7).size).toBe(0);
  });
});
