import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyIdOf, open, seal } from './aead.js';

describe('aead', () => {
  const key = randomBytes(32);

  it('round-trips and uses a fresh nonce each time', () => {
    const a = seal(key, 'sk-live-123', 'agent:1');
    const b = seal(key, 'sk-live-123', 'agent:1');
    expect(a).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(a.split('.')[1]).toBe(keyIdOf(key));
    expect(a).not.toBe(b);
    expect(a).not.toContain('sk-live');
    expect(open(key, a, 'agent:1')).toBe('sk-live-123');
  });

  it('returns null on wrong key, wrong AAD or tampering', () => {
    const sealed = seal(key, 'secret', 'agent:1');
    expect(open(randomBytes(32), sealed, 'agent:1')).toBeNull();
    expect(open(key, sealed, 'agent:2')).toBeNull();
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0]! ^= 1;
    expect(open(key, [...parts.slice(0, 3), body.toString('base64url')].join('.'), 'agent:1')).toBeNull();
    const nonce = Buffer.from(parts[2]!, 'base64url');
    nonce[0]! ^= 1;
    expect(open(key, [parts[0], parts[1], nonce.toString('base64url'), parts[3]].join('.'), 'agent:1')).toBeNull();
    // A key with a forged key id still fails authentication.
    expect(open(key, ['v1', keyIdOf(key), parts[2], 'AAAA'].join('.'), 'agent:1')).toBeNull();
    expect(open(key, 'garbage', 'agent:1')).toBeNull();
  });

  it('rejects keys of the wrong size', () => {
    expect(() => seal(randomBytes(16), 'x', '')).toThrow(/32 bytes/);
  });
});
