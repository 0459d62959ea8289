import { hkdfSync } from 'node:crypto';
import { open, seal } from './aead.js';

/** Seals agents' upstreamSecret and providers' authSecret at rest. */
export interface SecretBox {
  seal(plaintext: string, aad: string): string;
  /** Tries the current key, then each previous one; null when none opens it. */
  open(sealed: string, aad: string): string | null;
}

const INFO = 'agentgw upstream-secrets';
const HEX_KEY = /^[0-9a-fA-F]{64}$/;

function subkeyOf(keyHex: string): Buffer {
  if (!HEX_KEY.test(keyHex)) throw new Error('secret box key must be 64 hex characters');
  return Buffer.from(hkdfSync('sha256', Buffer.from(keyHex, 'hex'), Buffer.alloc(0), INFO, 32));
}

/**
 * Box keyed by an HKDF-SHA256 subkey of CREDENTIAL_ENCRYPTION_KEY, so the vault's key itself
 * never encrypts anything but vault entries. Previous keys (CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS)
 * keep secrets sealed before a key rotation readable; writes always use the current key.
 */
export function createSecretBox(keyHex: string, previousKeysHex: readonly string[] = []): SecretBox {
  const current = subkeyOf(keyHex);
  const readable = [current, ...previousKeysHex.map(subkeyOf)];
  return {
    seal: (plaintext, aad) => seal(current, plaintext, aad),
    open: (sealed, aad) => {
      for (const key of readable) {
        const plain = open(key, sealed, aad);
        if (plain !== null) return plain;
      }
      return null;
    },
  };
}

/** The secret box for a loaded configuration. */
export const secretBoxFor = (config: {
  CREDENTIAL_ENCRYPTION_KEY: string;
  CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS: readonly string[];
}): SecretBox => createSecretBox(config.CREDENTIAL_ENCRYPTION_KEY, config.CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS);
