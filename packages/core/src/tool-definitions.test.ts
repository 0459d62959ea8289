import { describe, expect, it } from 'vitest';
import { definitionHashes, definitionOf } from './tool-definitions.js';

describe('definition hashes', () => {
  it('are stable under key order at every depth and change with any pinned field', () => {
    const a = definitionHashes(
      definitionOf({
        name: 't',
        description: 'd',
        inputSchema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } } },
      }),
    );
    const b = definitionHashes(
      definitionOf({
        inputSchema: { properties: { b: { type: 'number' }, a: { type: 'string' } }, type: 'object' },
        description: 'd',
        name: 't',
      }),
    );
    expect(a).toEqual(b);
    expect(definitionHashes(definitionOf({ name: 't', description: 'd!', inputSchema: {} })).hash).not.toBe(
      definitionHashes(definitionOf({ name: 't', description: 'd', inputSchema: {} })).hash,
    );
    expect(definitionHashes(definitionOf({ name: 't', annotations: { destructiveHint: true } })).hash).not.toBe(
      definitionHashes(definitionOf({ name: 't' })).hash,
    );
  });

  it('leave out fields a pin does not cover, and the body hash leaves out the name', () => {
    expect(definitionHashes(definitionOf({ name: 't', description: 'd', title: 'T', _meta: { x: 1 } }))).toEqual(
      definitionHashes(definitionOf({ name: 't', description: 'd' })),
    );
    const one = definitionHashes(definitionOf({ name: 'one', description: 'd' }));
    const two = definitionHashes(definitionOf({ name: 'two', description: 'd' }));
    expect(one.bodyHash).toBe(two.bodyHash);
    expect(one.hash).not.toBe(two.hash);
  });
});
