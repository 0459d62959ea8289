import { describe, expect, it } from 'vitest';
import { selfTimes, type CpuProfile } from './cpu-profile-summary.js';

const frame = (id: number, functionName: string, url: string, lineNumber = 0) => ({ id, callFrame: { functionName, url, lineNumber } });

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
    expect(selfTimes({ nodes: [frame(1, 'a', '')], samples: [1, 9], timeDeltas: [100, 100] })).toEqual([{ frame: 'a (native)', selfMs: 0.1, share: 1 }]);
  });
});
