import { describe, expect, it } from 'vitest';
import { allWords, stem } from './terms.js';

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

describe('allWords', () => {
  it('splits camelCase, acronyms, separators, and letters from digits in runs longer than a short code', () => {
    expect(allWords('getHTTPStatus slack_get_user-profile', 4_096)).toEqual([
      'get',
      'http',
      'status',
      'slack',
      'get',
      'user',
      'profile',
    ]);
    expect(allWords('route53 s3 ec2 k8s sha256sum a1b2c3', 4_096)).toEqual([
      'route',
      '53',
      's3',
      'ec2',
      'k8s',
      'sha',
      '256',
      'sum',
      'a',
      '1b',
      '2c',
      '3',
    ]);
    expect(allWords('Create a page in Notion', 4_096)).toEqual(['create', 'a', 'page', 'in', 'notion']);
    expect(allWords('créerPage Öffnen', 4_096)).toEqual(['créer', 'page', 'öffnen']);
  });
});
