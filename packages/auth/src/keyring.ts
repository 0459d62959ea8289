import { hkdfSync } from 'node:crypto';
import { keyIdOf, open, seal, sealedKeyId } from './aead.js';

/** Why a sealed value did not open: no configured key has its id, or it fails authentication (other key, other owner, tampering). */
export type OpenResult = { ok: true; value: string } | { ok: false; reason: 'unknown_key' | 'unauthentic' };

/**
 * The one key ring for every sealed secret (user credentials under the credential key; agents',
 * providers' and credential providers' secrets under the platform key): AES-256-GCM with a random
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
  /** HKDF-SHA256 subkey of the current key for one purpose (`info`), e.g. MCP session ids: what is issued now. */
  subkey(info: string): Uint8Array;
  /** The same subkey of the current key (first: never empty), then of each previous key: what is still accepted. */
  subkeys(info: string): Subkeys;
}

/** A purpose's subkeys: the current key's first (what is issued), then the previous keys' (still accepted). */
export type Subkeys = readonly [current: Uint8Array, ...previous: Uint8Array[]];

/** HKDF salt of every ring subkey; changing it would void every session id and audit id in flight. */
const SUBKEY_SALT = 'agentgw key-ring subkey v1';

const deriveSubkey = (key: Uint8Array, info: string): Uint8Array =>
  new Uint8Array(hkdfSync('sha256', key, SUBKEY_SALT, info, 32));

/**
 * A key ring over raw 32-byte keys: `current` seals; it and every `previous` key open and derive
 * subkeys. `openOnly` keys open sealed values and nothing else (values of an older key scheme,
 * until re-encryption moves them).
 */
export function createKeyring(
  current: Uint8Array,
  previous: readonly Uint8Array[] = [],
  openOnly: readonly Uint8Array[] = [],
): Keyring {
  const currentKeyId = keyIdOf(current);
  const byId = new Map<string, Uint8Array>();
  for (const key of [current, ...previous, ...openOnly]) if (!byId.has(keyIdOf(key))) byId.set(keyIdOf(key), key);

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
    subkey: (info) => deriveSubkey(current, info),
    subkeys: (info) => [deriveSubkey(current, info), ...previous.map((key) => deriveSubkey(key, info))],
  };
}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
/**
 * HKDF info of the platform secrets' key before PLATFORM_SECRETS_KEY existed (a subkey of the
 * credential key); values sealed under it open wherever the credential key is configured.
 */
const LEGACY_PLATFORM_INFO = 'agentgw upstream-secrets';

function rawKey(hex: string): Buffer {
  if (!HEX_KEY.test(hex)) throw new Error('key must be 64 hex characters');
  return Buffer.from(hex, 'hex');
}

const legacyPlatformSubkey = (hex: string): Buffer =>
  Buffer.from(hkdfSync('sha256', rawKey(hex), Buffer.alloc(0), LEGACY_PLATFORM_INFO, 32));

/**
 * The key configuration the rings are built from. Each key is present only in the services that
 * hold it: the credential key in the vault (and the all-in-one), the platform key in the others.
 */
export interface KeyConfig {
  CREDENTIAL_ENCRYPTION_KEY?: string | undefined;
  CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: readonly string[];
  PLATFORM_SECRETS_KEY?: string | undefined;
  PLATFORM_SECRETS_PREVIOUS_KEYS: readonly string[];
}

/** The part of the key configuration the credential ring reads. */
export type CredentialKeyConfig = Pick<KeyConfig, 'CREDENTIAL_ENCRYPTION_KEY' | 'CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS'>;

type KeyName = 'CREDENTIAL_ENCRYPTION_KEY' | 'PLATFORM_SECRETS_KEY';

// Services check the keys they hold when they load their configuration; reaching these is a wiring bug.
const notConfigured = (name: KeyName): Error => new Error(`${name} is not configured in this service`);

function required(name: KeyName, value: string | undefined): string {
  if (!value) throw notConfigured(name);
  return value;
}

/** The ring of a service that does not hold the key: building it is harmless, every use throws. */
function absentRing(name: KeyName): Keyring {
  const refuse = (): never => {
    throw notConfigured(name);
  };
  return {
    currentKeyId: '',
    seal: refuse,
    open: refuse,
    openResult: refuse,
    isCurrent: refuse,
    subkey: refuse,
    subkeys: refuse,
  };
}

/**
 * User credentials (the vault): CREDENTIAL_ENCRYPTION_KEY itself, older keys from
 * CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS. Only the vault's code builds this ring.
 */
export function credentialKeyringFor(config: CredentialKeyConfig): Keyring {
  const key = required('CREDENTIAL_ENCRYPTION_KEY', config.CREDENTIAL_ENCRYPTION_KEY);
  return createKeyring(rawKey(key), config.CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS.map(rawKey));
}

/** The platform-secrets ring, the type callers that seal agents', providers' and credential providers' secrets name. */
export type SecretBox = Keyring;

/**
 * Platform secrets (agents' upstream secrets, providers' auth secrets, credential providers'
 * config secrets) and the subkeys of MCP session ids and audit ids: PLATFORM_SECRETS_KEY, older
 * keys from PLATFORM_SECRETS_PREVIOUS_KEYS. Where the credential key is configured too (the
 * all-in-one, `reencrypt`), values sealed under its old HKDF subkey still open. Without the
 * platform key (the vault, confirmation-hub, audit-writer) every use of the ring throws.
 */
export function secretBoxFor(config: KeyConfig): SecretBox {
  // Every service's catalog builds one (auth reads agents through it); only some open secrets.
  const key = config.PLATFORM_SECRETS_KEY;
  if (!key) return absentRing('PLATFORM_SECRETS_KEY');
  const legacy = config.CREDENTIAL_ENCRYPTION_KEY
    ? [config.CREDENTIAL_ENCRYPTION_KEY, ...config.CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS].map(legacyPlatformSubkey)
    : [];
  return createKeyring(rawKey(key), config.PLATFORM_SECRETS_PREVIOUS_KEYS.map(rawKey), legacy);
}
