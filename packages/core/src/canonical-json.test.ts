import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';

describe('canonicalJson', () => {
  it('is the same text whatever the key order, at every depth', () => {
    const a = { b: 1, a: { y: [1, { q: 2, p: 3 }], x: null } };
    const b = { a: { x: null, y: [1, { p: 3, q: 2 }] }, b: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"a":{"x":null,"y":[1,{"p":3,"q":2}]},"b":1}');
  });

  it('leaves out undefined members, keeps array order and pretty-prints on request', () => {
    expect(canonicalJson({ a: undefined, b: [2, 1] })).toBe('{"b":[2,1]}');
    expect(canonicalJson({ b: 1, a: 2 }, 2)).toBe('{\n  "a": 2,\n  "b": 1\n}');
    expect(canonicalJson(undefined)).toBe('null');
  });
});
