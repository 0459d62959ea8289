import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { readProbes } from './probe-reports.js';
import { readThreads, splitThreadCpu } from './thread-cpu-split.js';

// Started with the probe preloaded; on a line on stdin it starts a worker thread that spins until
// its own thread has used 0.3 s of CPU (by /proc/thread-self/stat), then prints "spun" and stays
// alive (an ended thread leaves /proc/<pid>/task).
const SCRIPT = `
const { Worker } = require('node:worker_threads');
const SPIN = "const { readFileSync } = require('node:fs');" +
  "const ticks = () => readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((a, b) => a + Number(b), 0);" +
  "while (ticks() < 30);" +
  "require('node:worker_threads').parentPort.postMessage('spun'); setTimeout(() => {}, 60000);";
process.stdin.once('data', () => new Worker(SPIN, { eval: true }).once('message', (m) => console.log(m)));
console.log('ready');
`;

describe('CPU split per thread', () => {
  it("counts a worker thread's CPU as the worker's, named by the probe, and reports the main thread's memory", async () => {
    const probeDir = mkdtempSync(join(tmpdir(), 'bench-split-test-'));
    const probe = new URL('./eventloop-probe.mjs', import.meta.url).href;
    const child = spawn(process.execPath, [`--import=${probe}`, '-e', SCRIPT], {
      env: { ...process.env, BENCH_PROBE_DIR: probeDir },
    });
    try {
      const lines = createInterface({ input: child.stdout });
      const next = async () => ((await once(lines, 'line')) as [string])[0];
      expect(await next()).toBe('ready');
      const before = readThreads([child.pid!]);
      child.stdin.write('go\n');
      expect(await next()).toBe('spun');
      const after = readThreads([child.pid!]);
      const [report] = await readProbes([child.pid!], probeDir);
      expect(report!.workerThreads).toHaveLength(1);
      const split = splitThreadCpu(before, after, new Set(report!.workerThreads));
      expect(split.workers).toBeGreaterThanOrEqual(0.29);
      expect(split.main).toBeLessThan(split.workers);
      expect(report!.memory.heapTotal).toBeGreaterThan(0);
      expect(report!.memory.rss).toBeGreaterThan(report!.memory.heapTotal);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
      rmSync(probeDir, { recursive: true, force: true });
    }
  });
});
