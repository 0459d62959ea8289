import { describe, expect, it } from 'vitest';
import { nameWasmFrames } from './cpu-profile-summary.js';
import { engineFunctionNames, wasmFunctionNames } from './wasm-function-names.js';

const text = (s: string) => [s.length, ...Buffer.from(s)];
const section = (id: number, content: number[]) => [id, content.length, ...content];

/** Two empty functions: 0 exported as "exp0"; 1 exported as "exp1" and named "named1" in the name section. */
const MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, [1, 0x60, 0, 0]),
  ...section(3, [2, 0, 0]),
  ...section(7, [2, ...text('exp0'), 0, 0, ...text('exp1'), 0, 1]),
  ...section(10, [2, 2, 0, 0x0b, 2, 0, 0x0b]),
  ...section(0, [...text('name'), ...section(1, [1, 1, ...text('named1')])]),
]);

/** The engine's WebAssembly API (the project's TypeScript libraries do not declare it). */
const { WebAssembly: wasm } = globalThis as unknown as {
  WebAssembly: { Module: { new (bytes: Uint8Array): object; exports(module: object): { name: string }[] } };
};

describe('wasmFunctionNames', () => {
  it('names functions from the name section first, then from the exports', () => {
    expect(wasm.Module.exports(new wasm.Module(MODULE)).map((e) => e.name)).toEqual(['exp0', 'exp1']);
    expect([...wasmFunctionNames(MODULE)].sort()).toEqual([
      [0, 'exp0'],
      [1, 'named1'],
    ]);
  });

  it("reads the embedded database engine's module", () => {
    const names = engineFunctionNames();
    expect(names.size).toBeGreaterThan(1000);
    expect([...names.values()]).toContain('memcmp');
  });
});

describe('nameWasmFrames', () => {
  it('puts the function name before a wasm frame it knows, and leaves the others', () => {
    const frames = [
      { frame: 'wasm-function[1] wasm://wasm/abc:1', selfMs: 2, share: 0.5 },
      { frame: 'wasm-function[9] wasm://wasm/abc:1', selfMs: 1, share: 0.25 },
      { frame: 'parse (native)', selfMs: 1, share: 0.25 },
    ];
    expect(nameWasmFrames(frames, wasmFunctionNames(MODULE)).map((f) => f.frame)).toEqual([
      'named1 (wasm-function[1])',
      'wasm-function[9] wasm://wasm/abc:1',
      'parse (native)',
    ]);
  });
});
