import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { commandOf, cpuSeconds, processTree, residentBytes } from './process-stats.js';

describe('process stats from /proc', () => {
  it('finds a child in the tree and reads its CPU time and resident memory', async () => {
    const child = spawn(process.execPath, ['-e', 'let x = 0; const end = Date.now() + 300; while (Date.now() < end) x++; setTimeout(() => {}, 5000)']);
    try {
      await new Promise((r) => setTimeout(r, 600));
      const tree = processTree(process.pid);
      expect(tree[0]).toBe(process.pid);
      expect(tree).toContain(child.pid);
      expect(commandOf(child.pid!)).toBe('node');
      expect(cpuSeconds([child.pid!])).toBeGreaterThan(0.1);
      expect(residentBytes(child.pid!)).toBeGreaterThan(10 * 1024 * 1024);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  it('reads nothing for a process that is gone', () => {
    expect(processTree(2 ** 22 + 7)).toEqual([]);
    expect(cpuSeconds([2 ** 22 + 7])).toBe(0);
    expect(residentBytes(2 ** 22 + 7)).toBe(0);
  });
});
