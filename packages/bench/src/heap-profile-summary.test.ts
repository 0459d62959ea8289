import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bytesPerFrame, bytesPerOrigin, summariseHeapProfiles, type HeapProfileNode } from './heap-profile-summary.js';

const node = (functionName: string, url: string, selfSize: number, children: HeapProfileNode[] = []) => ({
  callFrame: { functionName, url, lineNumber: 4 },
  selfSize,
  children,
});

const profile = node('(root)', '', 0, [
  node('parse', 'file:///r/node_modules/.pnpm/zod@4.1.0/node_modules/zod/index.js', 300, [
    node('open', 'file:///r/packages/audit/src/trail.ts', 100),
  ]),
  node('open', 'file:///r/packages/audit/src/trail.ts', 200),
  node('(V8 API)', '', 50),
]);

describe('heap profile summary', () => {
  it('sums the bytes each frame allocated wherever it was called from', () => {
    expect(bytesPerFrame(profile)).toEqual([
      { frame: 'open packages/audit/src/trail.ts:5', bytes: 300, share: 300 / 650 },
      { frame: 'parse zod@4.1.0:5', bytes: 300, share: 300 / 650 },
      { frame: '(V8 API) (native)', bytes: 50, share: 50 / 650 },
    ]);
  });

  it('groups the bytes by package, app or package folder, and V8 names', () => {
    expect(bytesPerOrigin(profile).map((f) => [f.frame, f.bytes])).toEqual([
      ['packages/audit', 300],
      ['zod@4.1.0', 300],
      ['(V8 API)', 50],
    ]);
  });

  it('says what its samples count: every allocation, or only what outlived the young generation', () => {
    const dir = mkdtempSync(join(tmpdir(), 'heap-summary-'));
    try {
      writeFileSync(join(dir, 'gateway-1.heapprofile'), JSON.stringify({ head: profile }));
      expect(summariseHeapProfiles(dir, 2).split('\n')[0]).toMatch(/freed objects included/);
      const promoted = summariseHeapProfiles(dir, 2, 'promoted').split('\n');
      expect(promoted[0]).toMatch(/only what outlived the young generation/);
      expect(promoted[1]).toMatch(/open packages\/audit\/src\/trail\.ts:5$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
