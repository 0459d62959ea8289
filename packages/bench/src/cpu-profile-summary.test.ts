import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  mergeFrameTimes,
  selfTimeByOrigin,
  selfTimes,
  summariseProfiles,
  type CpuProfile,
} from './cpu-profile-summary.js';

const frame = (id: number, functionName: string, url: string, lineNumber = 0) => ({
  id,
  callFrame: { functionName, url, lineNumber },
});

describe('selfTimes', () => {
  it('sums each frame’s sample time and names where its code lives', () => {
    const profile: CpuProfile = {
      nodes: [
        frame(1, '(root)', ''),
        frame(2, 'sign', 'file:///r/node_modules/.pnpm/jose@6.1.0/node_modules/jose/dist/sign.js', 9),
        frame(3, 'resolve', 'file:///r/packages/credentials/src/vault.ts', 41),
        frame(4, '', 'node:internal/http'),
      ],
      samples: [2, 3, 2, 4, 2],
      timeDeltas: [1000, 500, 1000, 250, 2000],
    };
    expect(selfTimes(profile)).toEqual([
      { frame: 'sign jose@6.1.0:10', selfMs: 4, share: 4 / 4.75 },
      { frame: 'resolve packages/credentials/src/vault.ts:42', selfMs: 0.5, share: 0.5 / 4.75 },
      { frame: '(anonymous) node:internal/http:1', selfMs: 0.25, share: 0.25 / 4.75 },
    ]);
  });

  it('ignores samples of unknown nodes', () => {
    expect(selfTimes({ nodes: [frame(1, 'a', '')], samples: [1, 9], timeDeltas: [100, 100] })).toEqual([
      { frame: 'a (native)', selfMs: 0.1, share: 1 },
    ]);
  });
});

describe('selfTimeByOrigin', () => {
  it('groups frames by package, app or package folder, wasm and native names; idle left out', () => {
    const profile: CpuProfile = {
      nodes: [
        frame(1, '(idle)', ''),
        frame(2, 'a', 'file:///r/node_modules/.pnpm/jose@6.1.0/node_modules/jose/dist/a.js'),
        frame(3, 'b', 'file:///r/node_modules/.pnpm/jose@6.1.0/node_modules/jose/dist/b.js'),
        frame(4, 'c', 'file:///r/apps/mcp-gateway/src/mcp.routes.ts'),
        frame(5, 'wasm-function[1]', 'wasm://wasm/abc'),
        frame(6, '(garbage collector)', ''),
      ],
      samples: [1, 2, 3, 4, 5, 6],
      timeDeltas: [9000, 1000, 1000, 1000, 3000, 2000],
    };
    expect(selfTimeByOrigin(profile).map((f) => [f.frame, f.selfMs])).toEqual([
      ['wasm (the embedded database engine)', 3],
      ['jose@6.1.0', 2],
      ['(garbage collector)', 2],
      ['apps/mcp-gateway', 1],
    ]);
  });
});

describe('worker profiles', () => {
  const wasm = (ms: number): CpuProfile => ({
    nodes: [frame(1, '(idle)', ''), frame(2, 'wasm-function[7]', 'wasm://wasm/abc'), frame(3, 'parse', '')],
    samples: [1, 2, 3],
    timeDeltas: [5000, ms * 1000, 1000],
  });

  it("adds a worker's profile segments up frame by frame, idle left out", () => {
    const merged = mergeFrameTimes([selfTimes(wasm(3)), selfTimes(wasm(5))]);
    expect(merged.map((f) => [f.frame, f.selfMs, f.share])).toEqual([
      ['wasm-function[7] wasm://wasm/abc:1', 8, 0.8],
      ['parse (native)', 2, 0.2],
    ]);
  });

  it("prints the main thread's profile, then its own process's worker segments merged", () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentgw-profiles-'));
    try {
      const main: CpuProfile = {
        nodes: [frame(1, 'handle', 'file:///r/apps/gateway/dist/cli.js')],
        samples: [1],
        timeDeltas: [4000],
      };
      writeFileSync(join(dir, 'gateway-41.cpuprofile'), JSON.stringify(main));
      writeFileSync(join(dir, 'worker-41-1-1.cpuprofile'), JSON.stringify(wasm(3)));
      writeFileSync(join(dir, 'worker-41-1-2.cpuprofile'), JSON.stringify(wasm(5)));
      // Another process's worker is not this one's.
      writeFileSync(join(dir, 'worker-52-1-1.cpuprofile'), JSON.stringify(wasm(500)));
      const text = summariseProfiles(dir, 5);
      expect(text).toContain('4 ms 100.0%  handle apps/gateway/dist/cli.js:1');
      expect(text).toContain('its worker threads, 2 profile segments merged');
      expect(text).toContain('8 ms  80.0%  wasm-function[7] wasm://wasm/abc:1');
      expect(text).toContain('8 ms  80.0%  wasm (the embedded database engine)');
      expect(text).not.toContain('500 ms');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
