import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt with per-password random salt. The encoded form carries its parameters
 * (`scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>`) so they can be raised later without
 * breaking stored hashes.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
/** Upper bound on accepted cost so a tampered hash row cannot make verification hog memory. */
const MAX_N = 2 ** 20;

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

function decode(encoded: string): { N: number; r: number; p: number; salt: Buffer; key: Buffer } | null {
  const parts = encoded.split('$');
  const [scheme, nText, rText, pText, saltText, keyText] = parts;
  if (parts.length !== 6 || scheme !== 'scrypt' || saltText === undefined || keyText === undefined) return null;
  const [N, r, p] = [Number(nText), Number(rText), Number(pText)];
  const valid = (n: number) => Number.isInteger(n) && n > 0;
  if (!valid(N) || !valid(r) || !valid(p) || N > MAX_N || (N & (N - 1)) !== 0 || r > 32 || p > 16) return null;
  const salt = Buffer.from(saltText, 'base64url');
  const key = Buffer.from(keyText, 'base64url');
  if (salt.length === 0 || key.length !== KEY_LENGTH) return null;
  return { N, r, p, salt, key };
}

/** Constant-time check of a password against an encoded hash; a malformed hash never matches. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const stored = decode(encoded);
  if (!stored) return false;
  const key = await derive(password, stored.salt, stored);
  return timingSafeEqual(key, stored.key);
}

let dummyHash: Promise<string> | undefined;

/**
 * Login path: when the user does not exist, still spend one scrypt so response time does not
 * reveal which emails are registered. Always false without a stored hash.
 */
export async function verifyPasswordOrDummy(password: string, encoded: string | null | undefined): Promise<boolean> {
  if (encoded) return verifyPassword(password, encoded);
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await dummyHash);
  return false;
}
