import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM with a random 96-bit nonce. Sealed form: `v1.<keyId>.<nonce>.<ciphertext+tag>`
 * (base64url parts). The key id is a fingerprint of the key, so a rotated key can be told apart
 * from tampering; the AAD binds a ciphertext to its owner (e.g. `agent:<id>`), so it cannot be
 * moved to another row.
 */
const VERSION = 'v1';
const NONCE_LENGTH = 12;
const TAG_LENGTH = 16;

function checkKey(key: Uint8Array): void {
  if (key.length !== 32) throw new Error('AES-256-GCM key must be 32 bytes');
}

// Keys live as long as the process, and every open compares against the key's id: hash it once.
const keyIds = new WeakMap<Uint8Array, string>();

/** Short, non-reversible identifier of a key. */
export function keyIdOf(key: Uint8Array): string {
  let id = keyIds.get(key);
  if (id === undefined) {
    checkKey(key);
    id = createHash('sha256').update('agentgw key id\0').update(key).digest().subarray(0, 6).toString('base64url');
    keyIds.set(key, id);
  }
  return id;
}

export function seal(key: Uint8Array, plaintext: string, aad: string): string {
  checkKey(key);
  const nonce = randomBytes(NONCE_LENGTH);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_LENGTH });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return [VERSION, keyIdOf(key), nonce.toString('base64url'), body.toString('base64url')].join('.');
}

/** The key id a sealed value names, or null when it is not in the sealed form. */
export function sealedKeyId(sealed: string): string | null {
  const parts = sealed.split('.');
  return parts.length === 4 && parts[0] === VERSION && parts[1] ? parts[1] : null;
}

/** The plaintext, or null when the value was sealed with another key, altered, or bound to other AAD. */
export function open(key: Uint8Array, sealed: string, aad: string): string | null {
  const parts = sealed.split('.');
  const [version, keyId, nonceText, bodyText] = parts;
  if (parts.length !== 4 || version !== VERSION || keyId !== keyIdOf(key)) return null;
  if (nonceText === undefined || bodyText === undefined) return null;
  const nonce = Buffer.from(nonceText, 'base64url');
  const body = Buffer.from(bodyText, 'base64url');
  if (nonce.length !== NONCE_LENGTH || body.length < TAG_LENGTH) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_LENGTH });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_LENGTH));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_LENGTH)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return null;
  }
}
