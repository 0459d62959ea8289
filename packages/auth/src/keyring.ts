import { hkdfSync } from 'node:crypto';
import { keyIdOf, open, seal, sealedKeyId } from './aead.js';

/** Why a sealed value did not open: no configured key has its id, or it fails authentication (other key, other owner, tampering). */
export type OpenResult = { ok: true; value: string } | { ok: false; reason: 'unknown_key' | 'unauthentic' };

/**
 * The one key ring for every sealed secret (user credentials, agents' upstream secrets,
 * providers' auth secrets, credential providers' config secrets): AES-256-GCM with a random
 * 96-bit nonce (`aead.ts`), the key id in the sealed value, a current key that seals and
 * previous keys that only open, and additional data binding each value to its owner row.
 */
export interface Keyring {
  /** Id of the key new and re-sealed values are written under. */
  readonly currentKeyId: string;
  /** `v1.<keyId>.<nonce>.<ciphertext+tag>`, bound to `aad`. */
  seal(plaintext: string, aad: string): string;
  /** The plaintext, or null when no configured key opens it for this `aad`. */
  open(sealed: string, aad: string): string | null;
  /** As `open`, saying why it failed (for logs and re-encryption reports). */
  openResult(sealed: string, aad: string): OpenResult;
  /** Whether the value is sealed under the current key (re-encryption skips it). */
  isCurrent(sealed: string): boolean;
}

/** A key ring over raw 32-byte keys: `current` seals; it and every `previous` key open. */
export function createKeyring(current: Uint8Array, previous: readonly Uint8Array[] = []): Keyring {
  const currentKeyId = keyIdOf(current);
  const byId = new Map<string, Uint8Array>();
  for (const key of [current, ...previous]) if (!byId.has(keyIdOf(key))) byId.set(keyIdOf(key), key);

  const openResult = (sealed: string, aad: string): OpenResult => {
    const keyId = sealedKeyId(sealed);
    const key = keyId === null ? undefined : byId.get(keyId);
    if (!key) return { ok: false, reason: 'unknown_key' };
    const value = open(key, sealed, aad);
    return value === null ? { ok: false, reason: 'unauthentic' } : { ok: true, value };
  };
  return {
    currentKeyId,
    seal: (plaintext, aad) => seal(current, plaintext, aad),
    open: (sealed, aad) => {
      const result = openResult(sealed, aad);
      return result.ok ? result.value : null;
    },
    openResult,
    isCurrent: (sealed) => sealedKeyId(sealed) === currentKeyId,
  };
}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
/** HKDF info of the platform-secrets subkey; changing it would make every stored platform secret unreadable. */
const PLATFORM_INFO = 'agentgw upstream-secrets';

function rawKey(hex: string): Buffer {
  if (!HEX_KEY.test(hex)) throw new Error('key must be 64 hex characters');
  return Buffer.from(hex, 'hex');
}

const platformSubkey = (hex: string): Buffer =>
  Buffer.from(hkdfSync('sha256', rawKey(hex), Buffer.alloc(0), PLATFORM_INFO, 32));

/** The key configuration both key rings are built from. */
export interface KeyConfig {
  CREDENTIAL_ENCRYPTION_KEY: string;
  CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: readonly string[];
}

/**
 * User credentials (the vault): CREDENTIAL_ENCRYPTION_KEY itself, older keys from
 * CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS. Only the vault's code builds this ring.
 */
export function credentialKeyringFor(config: KeyConfig): Keyring {
  return createKeyring(rawKey(config.CREDENTIAL_ENCRYPTION_KEY), config.CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS.map(rawKey));
}

/** The platform-secrets ring, the type callers that seal agents', providers' and credential providers' secrets name. */
export type SecretBox = Keyring;

/**
 * Platform secrets (agents' upstream secrets, providers' auth secrets, credential providers'
 * config secrets): an HKDF-SHA256 subkey of each credential key, so the vault's key itself
 * seals nothing but user credentials and a platform ciphertext never opens as a credential.
 */
export function createSecretBox(keyHex: string, previousKeysHex: readonly string[] = []): SecretBox {
  return createKeyring(platformSubkey(keyHex), previousKeysHex.map(platformSubkey));
}

/** The platform-secrets ring for a loaded configuration. */
export const secretBoxFor = (config: KeyConfig): SecretBox =>
  createSecretBox(config.CREDENTIAL_ENCRYPTION_KEY, config.CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS);
