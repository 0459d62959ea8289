import { describe, expect, it } from 'vitest';
import { isWeakResult } from './search-guidance.js';
import { BROWSE_LIMITS, oneLine, providerSummaries, providerTools } from './tool-browse.js';
import { ToolIndex } from './tool-index.js';

const entry = (name: string, description: string, provider: string, about: string | null = null) => ({
  name,
  description,
  provider: { name: provider, description: about },
});

describe('browse', () => {
  it('summarises a text as its first sentence on one line, bounded', () => {
    expect(oneLine('Open an issue.\nNeeds a title.')).toBe('Open an issue.');
    expect(oneLine('  List   the\tissues  ')).toBe('List the issues');
    const long = oneLine('word '.repeat(10_000));
    expect(long).toHaveLength(BROWSE_LIMITS.summaryChars);
    expect(long.endsWith('…')).toBe(true);
  });

  it("lists providers in order with the operator's description, else their first tool names", () => {
    const entries = [
      entry('a1', 'A one.', 'alpha', 'The alpha service. More.'),
      entry('b1', 'B one.', 'beta'),
      entry('a2', 'A two.', 'alpha', 'The alpha service. More.'),
      ...Array.from({ length: 8 }, (_, i) => entry(`g${i}`, '', 'gamma')),
    ];
    expect(providerSummaries(entries)).toEqual([
      { provider: 'alpha', summary: 'The alpha service.', tools: 2 },
      { provider: 'beta', summary: '1 tools: b1', tools: 1 },
      { provider: 'gamma', summary: '8 tools: g0, g1, g2, g3, g4, g5, …', tools: 8 },
    ]);
    expect(providerTools(entries, 'alpha')).toEqual([
      { name: 'a1', summary: 'A one.' },
      { name: 'a2', summary: 'A two.' },
    ]);
    expect(providerTools(entries, 'delta')).toBeNull();
  });
});

describe('isWeakResult', () => {
  const index = ToolIndex.build([
    { name: 'create_issue', description: 'Open a new issue.' },
    { name: 'post_message', description: 'Post a message to a channel.' },
  ]);

  it('calls nothing, or a best hit answering less than half the query, weak', () => {
    expect(isWeakResult(index.search('open an issue', 5))).toBe(false);
    expect(isWeakResult(index.search('order pizza with cheese for the channel', 5))).toBe(true);
    expect(isWeakResult(index.search('zzz', 5))).toBe(true);
  });
});
