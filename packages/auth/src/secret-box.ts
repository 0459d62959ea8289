import { hkdfSync } from 'node:crypto';
import { open, seal } from './aead.js';

/** Seals agents' upstreamSecret and providers' authSecret at rest. */
export interface SecretBox {
  seal(plaintext: string, aad: string): string;
  open(sealed: string, aad: string): string | null;
}

const INFO = 'agentgw upstream-secrets';

/**
 * Box keyed by an HKDF-SHA256 subkey of CREDENTIAL_ENCRYPTION_KEY, so the vault's key itself
 * never encrypts anything but vault entries.
 */
export function createSecretBox(keyHex: string): SecretBox {
  if (!/^[0-9a-fA-F]{64}$/.test(keyHex)) throw new Error('secret box key must be 64 hex characters');
  const subkey = Buffer.from(hkdfSync('sha256', Buffer.from(keyHex, 'hex'), Buffer.alloc(0), INFO, 32));
  return {
    seal: (plaintext, aad) => seal(subkey, plaintext, aad),
    open: (sealed, aad) => open(subkey, sealed, aad),
  };
}
