import { describe, expect, it } from 'vitest';
import { selfTimeByOrigin, selfTimes, type CpuProfile } from './cpu-profile-summary.js';

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
