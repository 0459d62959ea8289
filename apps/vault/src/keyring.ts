import { keyIdOf, open, seal } from '@agentgw/auth';
import type { CredentialKind } from '@agentgw/db';

/** What a vault entry's ciphertext is bound to: moving it to another row makes it unreadable. */
export interface CredentialBinding {
  userId: string;
  serviceType: string;
  kind: CredentialKind;
}

/** The three columns a sealed value occupies in `user_credentials`. */
export interface SealedColumns {
  ciphertext: string;
  nonce: string;
  keyId: string;
}

export type OpenResult = { ok: true; value: string } | { ok: false; reason: 'unknown_key' | 'unauthentic' };

export interface Keyring {
  /** Key id new and re-encrypted rows are written under. */
  readonly currentKeyId: string;
  seal(binding: CredentialBinding, plaintext: string): SealedColumns;
  /** Never throws and never returns garbled text: a wrong key, another binding or tampering is a failure. */
  open(binding: CredentialBinding, sealed: SealedColumns): OpenResult;
}

/** Version tag of the compact form `v1.<keyId>.<nonce>.<ciphertext+tag>` produced by the auth package's AEAD. */
const SEALED_VERSION = 'v1';

function bindingAad(b: CredentialBinding): string {
  // JSON keeps the parts unambiguous whatever characters a user id holds.
  return `agentgw user-credential ${JSON.stringify([b.userId, b.serviceType, b.kind])}`;
}

/**
 * AES-256-GCM (the AEAD of @agentgw/auth) under CREDENTIAL_ENCRYPTION_KEY, with older keys kept
 * for reading only so the key can be rotated without losing stored credentials.
 */
export function createKeyring(currentKeyHex: string, previousKeysHex: readonly string[] = []): Keyring {
  const current = Buffer.from(currentKeyHex, 'hex');
  const currentKeyId = keyIdOf(current);
  const keys = new Map<string, Buffer>();
  for (const hex of [currentKeyHex, ...previousKeysHex]) {
    const key = Buffer.from(hex, 'hex');
    keys.set(keyIdOf(key), key);
  }

  return {
    currentKeyId,
    seal(binding, plaintext) {
      const parts = seal(current, plaintext, bindingAad(binding)).split('.');
      const [version, keyId, nonce, ciphertext] = parts;
      if (parts.length !== 4 || version !== SEALED_VERSION || keyId !== currentKeyId || !nonce || !ciphertext) {
        throw new Error('unexpected sealed format from the AEAD');
      }
      return { ciphertext, nonce, keyId };
    },
    open(binding, sealed) {
      const key = keys.get(sealed.keyId);
      if (!key) return { ok: false, reason: 'unknown_key' };
      const compact = [SEALED_VERSION, sealed.keyId, sealed.nonce, sealed.ciphertext].join('.');
      const value = open(key, compact, bindingAad(binding));
      return value === null ? { ok: false, reason: 'unauthentic' } : { ok: true, value };
    },
  };
}
