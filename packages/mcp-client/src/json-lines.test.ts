import { describe, expect, it } from 'vitest';
import { jsonLinesOf, parseJsonLines } from './json-lines.js';

async function collect(chunks: string[], max?: number): Promise<unknown[]> {
  async function* source() {
    for (const chunk of chunks) yield new TextEncoder().encode(chunk);
  }
  const out: unknown[] = [];
  for await (const value of parseJsonLines(source(), max)) out.push(value);
  return out;
}

describe('parseJsonLines', () => {
  it('yields each line as its newline arrives, across chunk borders, and the last without one', async () => {
    expect(await collect(['{"a":', '1}\n{"b"', ':2}\n\n{"c":3}'])).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it('joins a text spread over lines (pretty-printed) until it parses', async () => {
    expect(await collect(['{\n  "a": 1\n}\n{"b":2}\n'])).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('throws when pending text outgrows the bound', async () => {
    await expect(collect(['{"a":"', 'x'.repeat(50)], 20)).rejects.toThrow(/exceeds 20/);
  });
});

describe('jsonLinesOf', () => {
  it('reads a buffered body of newline-delimited messages', () => {
    expect(jsonLinesOf('{"method":"n"}\n{"id":1,"result":{}}')).toEqual([{ method: 'n' }, { id: 1, result: {} }]);
  });
});
