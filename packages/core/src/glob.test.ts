import { describe, expect, it } from 'vitest';
import { globSpecificity, matchGlob, MAX_GLOB_PATTERN_LENGTH, MAX_TOOL_NAME_LENGTH } from './glob.js';
import { ValidationError } from './errors.js';

describe('matchGlob', () => {
  it.each([
    ['*', 'anything_at_all', true],
    ['*', '', true],
    ['github_*', 'github_create_issue', true],
    ['github_*', 'github_', true],
    ['github_*', 'gitlab_create_issue', false],
    ['*_issue', 'github_create_issue', true],
    ['*_issue', 'github_create_issues', false],
    ['a*c', 'ac', true],
    ['a*c', 'abbbc', true],
    ['a*c', 'abbbd', false],
    ['file_?', 'file_1', true],
    ['file_?', 'file_', false],
    ['file_?', 'file_12', false],
    ['create', 'create_issue', false],
    ['create', 'recreate', false],
    ['Create', 'create', false],
  ])('%s against %s is %s', (pattern, name, expected) => {
    expect(matchGlob(pattern, name)).toBe(expected);
  });

  it('treats regular-expression characters as literals', () => {
    expect(matchGlob('a.b', 'a.b')).toBe(true);
    expect(matchGlob('a.b', 'axb')).toBe(false);
    expect(matchGlob('a+b', 'aab')).toBe(false);
    expect(matchGlob('a+b', 'a+b')).toBe(true);
    expect(matchGlob('(x|y)', 'x')).toBe(false);
    expect(matchGlob('[ab]', 'a')).toBe(false);
    expect(matchGlob('$^\\', '$^\\')).toBe(true);
    expect(matchGlob('tools/list-*', 'tools/list-all')).toBe(true);
  });

  it('lets * span any characters, newlines included', () => {
    expect(matchGlob('a*b', 'a\nb')).toBe(true);
  });

  it.each([
    ['*a*b', 'xaxxb', true],
    ['*a*b', 'xaxxbx', false],
    ['a*b*c', 'abcbc', true],
    ['a*b*c', 'acb', false],
    ['**', '', true],
    ['a**b', 'ab', true],
    ['?*?', 'ab', true],
    ['?*?', 'a', false],
    ['*?', '', false],
    ['x*', 'y', false],
    ['', '', true],
    ['', 'a', false],
    ['*ab', 'aab', true],
    ['*aab', 'aaab', true],
    ['😀_*', '😀_x', true],
  ])('backtracks correctly: %s against %s is %s', (pattern, name, expected) => {
    expect(matchGlob(pattern, name)).toBe(expected);
  });

  // A backtracking matcher (the old regular expression took 5 s per call) hangs on these inputs;
  // the 30 s test timeout is a hang bound, not a speed claim (speed is `pnpm bench`'s).
  it('matches the pathological pattern without catastrophic backtracking', { timeout: 30_000 }, () => {
    const pattern = '*a'.repeat(40) + '*b';
    const name = 'a'.repeat(MAX_TOOL_NAME_LENGTH);
    for (let i = 0; i < 20; i++) expect(matchGlob(pattern, name)).toBe(false);
    expect(matchGlob('*a*a*a*a*a*a*a*a*b', 'a'.repeat(40))).toBe(false);
    expect(matchGlob(pattern.slice(0, -1), name)).toBe(true);
  });

  it('refuses over-long patterns and names with a 400 instead of matching them', () => {
    expect(() => matchGlob('a'.repeat(MAX_GLOB_PATTERN_LENGTH + 1), 'a')).toThrow(ValidationError);
    expect(() => matchGlob('*', 'a'.repeat(MAX_TOOL_NAME_LENGTH + 1))).toThrow(ValidationError);
    expect(matchGlob('a'.repeat(MAX_GLOB_PATTERN_LENGTH), 'a'.repeat(MAX_GLOB_PATTERN_LENGTH))).toBe(true);
  });
});

describe('globSpecificity', () => {
  it('counts literal characters only', () => {
    expect(globSpecificity('*')).toBe(0);
    expect(globSpecificity('github_*')).toBe(7);
    expect(globSpecificity('file_?')).toBe(5);
    expect(globSpecificity('github_create_issue')).toBeGreaterThan(globSpecificity('github_*'));
  });
});
