import { hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyIdOf, seal } from './aead.js';
import { createKeyring, credentialKeyringFor, secretBoxFor, type KeyConfig } from './keyring.js';

const A = 'ab'.repeat(32);
const B = 'cd'.repeat(32);
const P = 'ef'.repeat(32);
const Q = '01'.repeat(32);
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
    const config = keys({ CREDENTIAL_ENCRYPTION_KEY: A, PLATFORM_SECRETS_KEY: P });
    const credential = credentialKeyringFor(config).seal('x', 'same-aad');
    const platform = secretBoxFor(config).seal('x', 'same-aad');
    expect(secretBoxFor(config).open(credential, 'same-aad')).toBeNull();
    expect(credentialKeyringFor(config).open(platform, 'same-aad')).toBeNull();
    expect(credentialKeyringFor(config).currentKeyId).toBe(keyIdOf(raw(A)));
    expect(secretBoxFor(config).currentKeyId).toBe(keyIdOf(raw(P)));
  });

  it('derives per-purpose subkeys: the current key’s to issue, every configured key’s to check, never the key itself', () => {
    const ring = createKeyring(raw(B), [raw(A)]);
    const sessions = ring.subkey('sessions');
    expect(sessions).toHaveLength(32);
    expect(Buffer.from(sessions).equals(raw(B))).toBe(false);
    expect(Buffer.from(sessions).equals(Buffer.from(ring.subkey('audit ids')))).toBe(false);
    expect(ring.subkeys('sessions')).toEqual([sessions, createKeyring(raw(A)).subkey('sessions')]);
    // HKDF-SHA256 with the ring's fixed salt: stable across processes and replicas.
    expect(Buffer.from(sessions)).toEqual(
      Buffer.from(hkdfSync('sha256', raw(B), 'agentgw key-ring subkey v1', 'sessions', 32)),
    );
  });

  it('names the missing key of a service that does not hold it', () => {
    expect(() => credentialKeyringFor(keys({ PLATFORM_SECRETS_KEY: P }))).toThrow(
      'CREDENTIAL_ENCRYPTION_KEY is not configured',
    );
    // Built by every service's catalog, so only its use throws.
    const absent = secretBoxFor(keys({ CREDENTIAL_ENCRYPTION_KEY: A }));
    expect(() => absent.open('v1.x.y.z', 'agent:a1')).toThrow('PLATFORM_SECRETS_KEY is not configured');
    expect(() => absent.seal('x', 'agent:a1')).toThrow('PLATFORM_SECRETS_KEY is not configured');
    expect(() => absent.subkeys('sessions')).toThrow('PLATFORM_SECRETS_KEY is not configured');
  });
});

describe('secret box (platform secrets)', () => {
  it('seals under PLATFORM_SECRETS_KEY, bound to the owner', () => {
    const box = secretBoxFor(keys({ PLATFORM_SECRETS_KEY: P }));
    const sealed = box.seal('upstream-token', 'agent:a1');
    expect(secretBoxFor(keys({ PLATFORM_SECRETS_KEY: P })).open(sealed, 'agent:a1')).toBe('upstream-token');
    expect(box.open(sealed, 'provider:a1')).toBeNull();
    expect(secretBoxFor(keys({ PLATFORM_SECRETS_KEY: Q })).open(sealed, 'agent:a1')).toBeNull();
    // Not under the credential key, nor any subkey of it.
    expect(
      secretBoxFor(keys({ PLATFORM_SECRETS_KEY: Q, CREDENTIAL_ENCRYPTION_KEY: P })).open(sealed, 'agent:a1'),
    ).toBeNull();
  });

  it('keeps secrets sealed under a previous platform key readable after rotation, and seals with the new one', () => {
    const old = secretBoxFor(keys({ PLATFORM_SECRETS_KEY: P })).seal('upstream-token', 'agent:a1');
    const rotated = secretBoxFor(keys({ PLATFORM_SECRETS_KEY: Q, PLATFORM_SECRETS_PREVIOUS_KEYS: [P] }));
    expect(rotated.open(old, 'agent:a1')).toBe('upstream-token');
    expect(rotated.isCurrent(old)).toBe(false);
    const resealed = rotated.seal('upstream-token', 'agent:a1');
    expect(secretBoxFor(keys({ PLATFORM_SECRETS_KEY: Q })).open(resealed, 'agent:a1')).toBe('upstream-token');
    expect(secretBoxFor(keys({ PLATFORM_SECRETS_KEY: P })).open(resealed, 'agent:a1')).toBeNull();
  });

  it('opens values of the old scheme (HKDF subkey of the credential key) only where the credential key is configured', () => {
    // What the gateway wrote before PLATFORM_SECRETS_KEY existed.
    const legacyKey = (hex: string) =>
      Buffer.from(hkdfSync('sha256', raw(hex), Buffer.alloc(0), 'agentgw upstream-secrets', 32));
    const legacy = seal(legacyKey(A), 'upstream-token', 'agent:a1');
    const migrating = secretBoxFor(keys({ PLATFORM_SECRETS_KEY: P, CREDENTIAL_ENCRYPTION_KEY: A }));
    expect(migrating.open(legacy, 'agent:a1')).toBe('upstream-token');
    expect(migrating.isCurrent(legacy)).toBe(false);
    expect(migrating.currentKeyId).toBe(keyIdOf(raw(P)));
    const afterRotation = secretBoxFor(
      keys({ PLATFORM_SECRETS_KEY: P, CREDENTIAL_ENCRYPTION_KEY: B, CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: [A] }),
    );
    expect(afterRotation.open(legacy, 'agent:a1')).toBe('upstream-token');
    // A service without the credential key (distributed admin-api, mcp-gateway) cannot.
    expect(secretBoxFor(keys({ PLATFORM_SECRETS_KEY: P })).open(legacy, 'agent:a1')).toBeNull();
    // The old subkey opens and derives nothing else: subkeys come from platform keys only.
    expect(migrating.subkeys('sessions')).toEqual([createKeyring(raw(P)).subkey('sessions')]);
  });

  it('refuses a malformed key', () => {
    expect(() => secretBoxFor(keys({ PLATFORM_SECRETS_KEY: 'abc' }))).toThrow(/64 hex/);
  });
});

function keys(set: Partial<KeyConfig>): KeyConfig {
  return { CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: [], PLATFORM_SECRETS_PREVIOUS_KEYS: [], ...set };
}
