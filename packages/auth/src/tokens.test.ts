import { describe, expect, it } from 'vitest';
import { generateApiKey, generateRuntimeToken, hashToken, sameHash, tokenKind } from './tokens.js';

describe('tokens', () => {
  it('mints art_ runtime tokens with hash and prefix', () => {
    const { token, hash, prefix } = generateRuntimeToken();
    expect(token).toMatch(/^art_[A-Za-z0-9_-]{43}$/);
    expect(hash).toBe(hashToken(token));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(prefix).toBe(token.slice(0, 12));
    expect(generateRuntimeToken().token).not.toBe(token);
  });

  it('mints gk_ API keys', () => {
    const { token, hash } = generateApiKey();
    expect(token).toMatch(/^gk_[A-Za-z0-9_-]{43}$/);
    expect(hash).toBe(hashToken(token));
  });

  it('classifies tokens by prefix and shape', () => {
    expect(tokenKind(generateRuntimeToken().token)).toBe('runtime');
    expect(tokenKind(generateApiKey().token)).toBe('api_key');
    expect(tokenKind('art_short')).toBeNull();
    expect(tokenKind('eyJhbGciOiJIUzI1NiJ9.e30.sig')).toBeNull();
    expect(tokenKind('')).toBeNull();
  });

  it('compares hashes in constant time', () => {
    const a = hashToken('a');
    expect(sameHash(a, hashToken('a'))).toBe(true);
    expect(sameHash(a, hashToken('b'))).toBe(false);
    expect(sameHash(a, a.slice(0, 10))).toBe(false);
    expect(sameHash('', '')).toBe(false);
  });
});
