import { credentialKeyringFor, type CredentialKeyConfig, type Keyring, type OpenResult } from '@agentgw/auth';
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

/** The vault's view of the key ring: user credentials, stored in three columns. */
export interface CredentialKeyring {
  /** Key id new and re-encrypted rows are written under. */
  readonly currentKeyId: string;
  seal(binding: CredentialBinding, plaintext: string): SealedColumns;
  /** Never throws and never returns garbled text: a wrong key, another binding or tampering is a failure. */
  open(binding: CredentialBinding, sealed: SealedColumns): OpenResult;
}

/** Version tag of the sealed form `v1.<keyId>.<nonce>.<ciphertext+tag>` of the auth package's key ring. */
const SEALED_VERSION = 'v1';

function bindingAad(b: CredentialBinding): string {
  // JSON keeps the parts unambiguous whatever characters a user id holds.
  return `agentgw user-credential ${JSON.stringify([b.userId, b.serviceType, b.kind])}`;
}

/**
 * User credentials under CREDENTIAL_ENCRYPTION_KEY (`credentialKeyringFor` of `@agentgw/auth`,
 * the one key ring implementation), with older keys kept for reading only so the key can be
 * rotated without losing stored credentials. The sealed form is split into the row's columns.
 */
export function createCredentialKeyring(config: CredentialKeyConfig): CredentialKeyring {
  const ring: Keyring = credentialKeyringFor(config);
  return {
    currentKeyId: ring.currentKeyId,
    seal(binding, plaintext) {
      const parts = ring.seal(plaintext, bindingAad(binding)).split('.');
      const [version, keyId, nonce, ciphertext] = parts;
      if (parts.length !== 4 || version !== SEALED_VERSION || keyId !== ring.currentKeyId || !nonce || !ciphertext) {
        throw new Error('unexpected sealed format from the key ring');
      }
      return { ciphertext, nonce, keyId };
    },
    open(binding, sealed): OpenResult {
      return ring.openResult(
        [SEALED_VERSION, sealed.keyId, sealed.nonce, sealed.ciphertext].join('.'),
        bindingAad(binding),
      );
    },
  };
}
