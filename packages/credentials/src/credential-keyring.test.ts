import { keyIdOf } from '@agentgw/auth';
import { describe, expect, it } from 'vitest';
import { createCredentialKeyring, type CredentialBinding } from './credential-keyring.js';

const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
/** The vault's ring for a current key and previous keys, as the configuration gives them. */
const createKeyring = (current: string, previous: string[] = []) =>
  createCredentialKeyring({ CREDENTIAL_ENCRYPTION_KEY: current, CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: previous });
const binding: CredentialBinding = { userId: 'user-1', serviceType: 'github', kind: 'jwt' };
const SECRET = 'ghp_supersecretvalue';

describe('credential keyring', () => {
  it('round-trips and writes under the current key id with a fresh 96-bit nonce each time', () => {
    const ring = createKeyring(KEY_A);
    const a = ring.seal(binding, SECRET);
    const b = ring.seal(binding, SECRET);
    expect(a.keyId).toBe(keyIdOf(Buffer.from(KEY_A, 'hex')));
    expect(Buffer.from(a.nonce, 'base64url')).toHaveLength(12);
    expect(a.nonce).not.toBe(b.nonce);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(a.ciphertext).not.toContain(SECRET);
    expect(Buffer.from(a.ciphertext, 'base64url').toString('utf8')).not.toContain(SECRET);
    expect(ring.open(binding, a)).toEqual({ ok: true, value: SECRET });
  });

  it.each([
    ['another user', { ...binding, userId: 'user-2' }],
    ['another service type', { ...binding, serviceType: 'gitlab' }],
    ['another kind', { ...binding, kind: 'api_key' as const }],
  ])('refuses a ciphertext moved to %s', (_label, other) => {
    const ring = createKeyring(KEY_A);
    expect(ring.open(other, ring.seal(binding, SECRET))).toEqual({ ok: false, reason: 'unauthentic' });
  });

  it('refuses tampered ciphertext and nonce', () => {
    const ring = createKeyring(KEY_A);
    const sealed = ring.seal(binding, SECRET);
    const bytes = Buffer.from(sealed.ciphertext, 'base64url');
    bytes[0] = bytes[0]! ^ 1;
    expect(ring.open(binding, { ...sealed, ciphertext: bytes.toString('base64url') }).ok).toBe(false);
    const nonce = Buffer.from(sealed.nonce, 'base64url');
    nonce[0] = nonce[0]! ^ 1;
    expect(ring.open(binding, { ...sealed, nonce: nonce.toString('base64url') }).ok).toBe(false);
  });

  it('fails closed under a key that did not seal the value', () => {
    const sealed = createKeyring(KEY_A).seal(binding, SECRET);
    expect(createKeyring(KEY_B).open(binding, sealed)).toEqual({ ok: false, reason: 'unknown_key' });
    // Even a forged key id pointing at the wrong key cannot produce plaintext.
    const ringB = createKeyring(KEY_B);
    expect(ringB.open(binding, { ...sealed, keyId: ringB.currentKeyId })).toEqual({ ok: false, reason: 'unauthentic' });
  });

  it('reads values sealed under a previous key and writes new ones under the current key', () => {
    const old = createKeyring(KEY_A).seal(binding, SECRET);
    const rotated = createKeyring(KEY_B, [KEY_A]);
    expect(rotated.open(binding, old)).toEqual({ ok: true, value: SECRET });
    expect(rotated.seal(binding, SECRET).keyId).toBe(keyIdOf(Buffer.from(KEY_B, 'hex')));
  });
});
