import { describe, expect, it } from 'vitest';
import { stem } from './terms.js';

describe('stem', () => {
  it('reduces endings so word forms meet, the same whether the word was seen before or not', () => {
    const expected: [string, string][] = [
      ['attachments', 'attach'],
      ['issues', 'issu'],
      ['stopped', 'stop'],
      ['deployments', 'deploy'],
      ['document', 'document'],
      ['GitHub', 'GitHub'],
    ];
    for (const [word, stemmed] of expected) {
      expect(stem(word)).toBe(stemmed);
      expect(stem(word)).toBe(stemmed);
    }
  });

  it('stays right after more distinct words than it keeps (its memory is emptied, not grown)', () => {
    for (let n = 0; n < 25_000; n++) stem(`word${n}ings`);
    expect(stem('attachments')).toBe('attach');
    expect(stem('word24999ings')).toBe(stem('word24999ings'));
    expect(stem('updated')).toBe('updat');
  });
});
