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
    const settled = await settledResidentBytes([process.pid], { everyMs: 5, steadyMs: 20, maxMs: 1_000 });
    expect(settled.bytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(settled.bytes).toBeLessThanOrEqual(residentBytes(process.pid) + 1024 * 1024);
    const bounded = await settledResidentBytes([2 ** 22 + 7], { everyMs: 5, steadyMs: 50, maxMs: 20 });
    expect(bounded).toEqual({ bytes: 0, afterMs: 0 });
  });

  it('reads nothing for a process that is gone', () => {
    expect(processTree(2 ** 22 + 7)).toEqual([]);
    expect(cpuSeconds([2 ** 22 + 7])).toBe(0);
    expect(residentBytes(2 ** 22 + 7)).toBe(0);
    expect(threadCpuSeconds(2 ** 22 + 7).size).toBe(0);
  });
});
