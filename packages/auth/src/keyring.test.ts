import { describe, expect, it } from 'vitest';
import { keyIdOf, open } from './aead.js';
import { createKeyring, createSecretBox, credentialKeyringFor, secretBoxFor } from './keyring.js';

const A = 'ab'.repeat(32);
const B = 'cd'.repeat(32);
const raw = (hex: string) => Buffer.from(hex, 'hex');

describe('keyring', () => {
  it('seals under the current key id and opens with previous keys; reports why a value does not open', () => {
    const old = createKeyring(raw(A)).seal('v', 'row:1');
    const ring = createKeyring(raw(B), [raw(A)]);
    expect(ring.currentKeyId).toBe(keyIdOf(raw(B)));
    expect(ring.openResult(old, 'row:1')).toEqual({ ok: true, value: 'v' });
    expect(ring.isCurrent(old)).toBe(false);
    const fresh = ring.seal('v', 'row:1');
    expect(ring.isCurrent(fresh)).toBe(true);
    expect(ring.openResult(fresh, 'row:2')).toEqual({ ok: false, reason: 'unauthentic' });
    expect(createKeyring(raw(A)).openResult(fresh, 'row:1')).toEqual({ ok: false, reason: 'unknown_key' });
    expect(ring.openResult('garbage', 'row:1')).toEqual({ ok: false, reason: 'unknown_key' });
    expect(ring.open(fresh, 'row:2')).toBeNull();
  });

  it('keeps user credentials and platform secrets apart: neither ring opens the other one’s values', () => {
    const config = { CREDENTIAL_ENCRYPTION_KEY: A, CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: [] };
    const credential = credentialKeyringFor(config).seal('x', 'same-aad');
    const platform = secretBoxFor(config).seal('x', 'same-aad');
    expect(secretBoxFor(config).open(credential, 'same-aad')).toBeNull();
    expect(credentialKeyringFor(config).open(platform, 'same-aad')).toBeNull();
    expect(credentialKeyringFor(config).currentKeyId).toBe(keyIdOf(raw(A)));
  });
});

describe('secret box (platform secrets)', () => {
  it('seals with an HKDF subkey, never the raw key', () => {
    const box = createSecretBox(A);
    const sealed = box.seal('upstream-token', 'agent:a1');
    expect(box.open(sealed, 'agent:a1')).toBe('upstream-token');
    expect(createSecretBox(A).open(sealed, 'agent:a1')).toBe('upstream-token');
    expect(open(raw(A), sealed, 'agent:a1')).toBeNull();
    expect(box.open(sealed, 'provider:a1')).toBeNull();
    expect(createSecretBox(B).open(sealed, 'agent:a1')).toBeNull();
  });

  it('keeps secrets sealed under a previous key readable after rotation, and seals with the new one', () => {
    const old = createSecretBox(A).seal('upstream-token', 'agent:a1');
    const rotated = createSecretBox(B, [A]);
    expect(rotated.open(old, 'agent:a1')).toBe('upstream-token');
    const resealed = rotated.seal('upstream-token', 'agent:a1');
    expect(createSecretBox(B).open(resealed, 'agent:a1')).toBe('upstream-token');
    expect(createSecretBox(A).open(resealed, 'agent:a1')).toBeNull();
  });

  it('refuses a malformed key', () => {
    expect(() => createSecretBox('abc')).toThrow(/64 hex/);
  });
});
