import { describe, expect, it } from 'vitest';
import { isResumeUrl } from './oauth-consent.js';

const ORIGIN = 'https://gw.example.com';

describe('isResumeUrl', () => {
  it("follows the gateway's own authorization endpoint, relative or absolute", () => {
    expect(isResumeUrl('/oauth/authorize/abc123', ORIGIN)).toBe(true);
    expect(isResumeUrl(`${ORIGIN}/oauth/authorize/abc123`, ORIGIN)).toBe(true);
  });

  it('refuses any other origin, scheme or path (no open redirect)', () => {
    for (const target of [
      'https://evil.example/oauth/authorize/abc',
      '//evil.example/oauth/authorize/abc',
      'javascript:alert(1)',
      `${ORIGIN}/agents`,
      'http://gw.example.com/oauth/authorize/abc',
      'https://gw.example.com.evil.example/oauth/authorize/abc',
    ]) {
      expect(isResumeUrl(target, ORIGIN), target).toBe(false);
    }
  });
});
