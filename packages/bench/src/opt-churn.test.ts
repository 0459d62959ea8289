import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { OPT_TRACE_FLAGS, OptChurn, parseOptimised, ScriptLocator } from './opt-churn.js';

const dir = mkdtempSync(join(tmpdir(), 'opt-churn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseOptimised', () => {
  it('reads the function a job compiles, not the ones inlined into it', () => {
    expect(parseOptimised('--- FUNCTION SOURCE (/srv/a:b/cli.js:keyOf) id{7,-1} start{1234} ---')).toEqual({
      script: '/srv/a:b/cli.js',
      name: 'keyOf',
      start: 1234,
    });
    expect(parseOptimised('--- FUNCTION SOURCE (/srv/cli.js:) id{8,-1} start{99} ---')).toEqual({
      script: '/srv/cli.js',
      name: '',
      start: 99,
    });
    expect(parseOptimised('--- FUNCTION SOURCE (/srv/cli.js:inner) id{8,0} start{120} ---')).toBeUndefined();
    expect(parseOptimised('[completed optimizing 0x1 <JSFunction f (sfi = 0x2)> (target TURBOFAN)]')).toBeUndefined();
  });
});

describe('OptChurn', () => {
  it('counts jobs per function only while open', async () => {
    const out = new PassThrough();
    const churn = new OptChurn(out);
    const job = (start: number) =>
      `--- FUNCTION SOURCE (/srv/cli.js:f) id{1,-1} start{${start}} ---\n(x) => x\n--- END ---\n`;
    out.write(job(10));
    await new Promise((done) => setImmediate(done));
    churn.open();
    out.write(job(10) + job(10) + job(10) + job(50));
    await new Promise((done) => setImmediate(done));
    churn.close();
    out.write(job(10));
    await new Promise((done) => setImmediate(done));
    const { total, churning } = churn.report(2);
    expect(total).toBe(4);
    expect(churning).toEqual([{ script: '/srv/cli.js', name: 'f', start: 10, count: 3 }]);
  });

  it('names a function node compiled three times, at its line', async () => {
    const script = join(dir, 'hot.js');
    writeFileSync(
      script,
      [
        '"use strict";',
        'function hot(x) { return x + 1; }',
        'for (let round = 0; round < 3; round++) {',
        '  %PrepareFunctionForOptimization(hot);',
        '  hot(1); hot(2);',
        '  %OptimizeFunctionOnNextCall(hot);',
        '  hot(3);',
        '  %DeoptimizeFunction(hot);',
        '}',
      ].join('\n'),
    );
    const child = spawn(process.execPath, ['--allow-natives-syntax', ...OPT_TRACE_FLAGS, script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const churn = new OptChurn(child.stdout);
    churn.open();
    // 'close' comes once the process has exited and its stdout has ended (every line read).
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(0);
    const { churning } = churn.report(3);
    expect(churning.map((job) => [new ScriptLocator(dir).locate(job), job.name, job.count])).toEqual([
      ['hot.js:2', 'hot', 3],
    ]);
  });
});

describe('ScriptLocator', () => {
  it('reads a bundle offset as the original file and line through the bundle map', () => {
    writeFileSync(join(dir, 'cli.js'), 'const a = 1;\nfunction hot() {}\n');
    // Generated line 2, column 0 is line 10 of src/thing.ts (VLQ: 0, 0, +9, 0 after 0, 0, 0, 0).
    writeFileSync(
      join(dir, 'cli.js.map'),
      JSON.stringify({ version: 3, sources: ['src/thing.ts'], names: [], mappings: 'AAAA;AASA' }),
    );
    const locator = new ScriptLocator(dir);
    expect(locator.locate({ script: join(dir, 'cli.js'), name: 'hot', start: 13 })).toBe('src/thing.ts:10');
    writeFileSync(join(dir, 'plain.js'), 'const a = 1;\nfunction hot() {}\n');
    expect(locator.locate({ script: join(dir, 'plain.js'), name: 'hot', start: 13 })).toBe('plain.js:2');
    const missing = join(dir, 'missing.js');
    expect(locator.locate({ script: missing, name: 'gone', start: 5 })).toBe(`${missing}@5`);
  });
});
