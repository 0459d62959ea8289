import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_VARIABLES = ['JWT_SECRET', 'CREDENTIAL_ENCRYPTION_KEY'] as const;
export type SecretVariable = (typeof SECRET_VARIABLES)[number];
export type Secrets = Record<SecretVariable, string>;

/** 48 URL-safe characters for JWT_SECRET, 32 random bytes as hex for CREDENTIAL_ENCRYPTION_KEY. */
export function generateSecrets(): Secrets {
  return {
    JWT_SECRET: randomBytes(36).toString('base64url'),
    CREDENTIAL_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  };
}

export const secretsPath = (dataDir: string): string => join(dataDir, 'secrets.json');

export function missingSecrets(env: Record<string, string | undefined>): SecretVariable[] {
  return SECRET_VARIABLES.filter((name) => !env[name]?.trim());
}

export function readStoredSecrets(dataDir: string): Secrets | null {
  const path = secretsPath(dataDir);
  if (!existsSync(path)) return null;
  const stored = JSON.parse(readFileSync(path, 'utf8')) as Partial<Secrets>;
  if (!stored.JWT_SECRET || !stored.CREDENTIAL_ENCRYPTION_KEY) {
    throw new Error(`${path} is incomplete; delete it to generate new secrets (credentials stored with the old key become unreadable)`);
  }
  return { JWT_SECRET: stored.JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY: stored.CREDENTIAL_ENCRYPTION_KEY };
}

/**
 * Development convenience: secrets generated once and kept in `<dataDir>/secrets.json`
 * (owner-only), so tokens and stored credentials survive restarts. Never used in production.
 */
export function loadOrCreateSecrets(dataDir: string): { secrets: Secrets; created: boolean } {
  const stored = readStoredSecrets(dataDir);
  if (stored) return { secrets: stored, created: false };
  mkdirSync(dataDir, { recursive: true });
  const secrets = generateSecrets();
  const path = secretsPath(dataDir);
  writeFileSync(path, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600); // in case the umask widened it
  return { secrets, created: true };
}
