import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_VARIABLES = ['JWT_SECRET', 'CREDENTIAL_ENCRYPTION_KEY', 'PLATFORM_SECRETS_KEY'] as const;
export type SecretVariable = (typeof SECRET_VARIABLES)[number];
export type Secrets = Record<SecretVariable, string>;

/**
 * Secrets without which the stored data is lost (tokens aside: user credentials are sealed under
 * the credential key): a secrets.json lacking one is refused rather than silently refilled.
 * PLATFORM_SECRETS_KEY is not among them: files written before it existed get one added, and
 * what was sealed before it still opens under the credential key's old subkey.
 */
const FOUNDING_SECRETS: readonly SecretVariable[] = ['JWT_SECRET', 'CREDENTIAL_ENCRYPTION_KEY'];

/** 48 URL-safe characters for JWT_SECRET, 32 random bytes as hex for each sealing key. */
export function generateSecrets(): Secrets {
  return {
    JWT_SECRET: randomBytes(36).toString('base64url'),
    CREDENTIAL_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    PLATFORM_SECRETS_KEY: randomBytes(32).toString('hex'),
  };
}

export const secretsPath = (dataDir: string): string => join(dataDir, 'secrets.json');

export function missingSecrets(env: Record<string, string | undefined>): SecretVariable[] {
  return SECRET_VARIABLES.filter((name) => !env[name]?.trim());
}

/** What secrets.json holds (null: no file); a file without a founding secret is an error. */
export function readStoredSecrets(dataDir: string): Partial<Secrets> | null {
  const path = secretsPath(dataDir);
  if (!existsSync(path)) return null;
  const stored = JSON.parse(readFileSync(path, 'utf8')) as Partial<Secrets>;
  if (FOUNDING_SECRETS.some((name) => !stored[name])) {
    throw new Error(
      `${path} is incomplete; delete it to generate new secrets (credentials stored with the old key become unreadable)`,
    );
  }
  return Object.fromEntries(SECRET_VARIABLES.filter((name) => stored[name]).map((name) => [name, stored[name]]));
}

/**
 * Development convenience: secrets generated once and kept in `<dataDir>/secrets.json`
 * (owner-only), so tokens and stored credentials survive restarts; a secret the file lacks
 * (PLATFORM_SECRETS_KEY in a file of an older version) is generated and added. Never used in
 * production. `generated` names what this call created.
 */
export function loadOrCreateSecrets(dataDir: string): { secrets: Secrets; generated: SecretVariable[] } {
  const stored = readStoredSecrets(dataDir);
  const generated = SECRET_VARIABLES.filter((name) => !stored?.[name]);
  const secrets: Secrets = { ...generateSecrets(), ...stored };
  if (generated.length === 0) return { secrets, generated };
  mkdirSync(dataDir, { recursive: true });
  const path = secretsPath(dataDir);
  const content = JSON.stringify(secrets, null, 2) + '\n';
  // A new file is created exclusively (two first starts never keep different keys); an older
  // file is completed beside and renamed over, so it never exists without its founding secrets.
  const target = stored ? `${path}.${process.pid}.tmp` : path;
  writeFileSync(target, content, { mode: 0o600, flag: 'wx' });
  chmodSync(target, 0o600); // in case the umask widened it
  if (target !== path) renameSync(target, path);
  return { secrets, generated };
}
