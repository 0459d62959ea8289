import { ConfigError, loadConfig, type Config } from '@agentgw/core';

/** The two sealing keys of the gateway (see apps/vault/README.md, "Who holds the key"). */
export type KeyVariable = 'CREDENTIAL_ENCRYPTION_KEY' | 'PLATFORM_SECRETS_KEY';

/**
 * The key boundary: which sealing keys each service needs. Only the vault holds the credential
 * key, so no other service can open a user's credential even with the database; the all-in-one
 * runs every service and holds both. A service not listed holds none.
 */
export const SERVICE_KEYS: Readonly<Record<string, readonly KeyVariable[]>> = {
  // The vault also opens credential providers' OAuth client secrets (sealed by admin-api under the platform key).
  vault: ['CREDENTIAL_ENCRYPTION_KEY', 'PLATFORM_SECRETS_KEY'],
  'admin-api': ['PLATFORM_SECRETS_KEY'],
  'invoke-proxy': ['PLATFORM_SECRETS_KEY'],
  'mcp-gateway': ['PLATFORM_SECRETS_KEY'],
  'confirmation-hub': [],
  'audit-writer': [],
};

/** What the key is for, in the start-up error of a service that lacks it. */
const PURPOSE: Record<KeyVariable, string> = {
  CREDENTIAL_ENCRYPTION_KEY: "64 hex characters; it opens users' credentials",
  PLATFORM_SECRETS_KEY: "64 hex characters; it seals agents' and providers' secrets, MCP session ids and audit ids",
};

/** Both keys: what the all-in-one (every service in one process) and `reencrypt` hold. */
export const ALL_KEYS: readonly KeyVariable[] = ['CREDENTIAL_ENCRYPTION_KEY', 'PLATFORM_SECRETS_KEY'];

/**
 * The configuration of `holder` (a service, the gateway, a command): `loadConfig` plus the
 * sealing keys it needs, every problem in one ConfigError (before any connection is made). The
 * two keys must differ: one key for both would hand users' credentials to every service again.
 */
export function loadConfigWithKeys(
  holder: string,
  keys: readonly KeyVariable[],
  env: Record<string, string | undefined> = process.env,
): Config {
  let config: Config | undefined;
  let problems: ConfigError['problems'] = [];
  try {
    config = loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems = err.problems;
  }
  for (const key of keys) {
    if (!env[key]?.trim()) problems.push({ variable: key, message: `is required by ${holder} (${PURPOSE[key]})` });
  }
  const [credential, platform] = [config?.CREDENTIAL_ENCRYPTION_KEY, config?.PLATFORM_SECRETS_KEY];
  if (credential && platform && credential.toLowerCase() === platform.toLowerCase()) {
    problems.push({ variable: 'PLATFORM_SECRETS_KEY', message: 'must differ from CREDENTIAL_ENCRYPTION_KEY' });
  }
  if (problems.length > 0 || !config) throw new ConfigError(problems);
  return config;
}

/** A distributed service's configuration: the keys SERVICE_KEYS gives it. */
export const loadServiceConfig = (service: string, env: Record<string, string | undefined> = process.env): Config =>
  loadConfigWithKeys(service, SERVICE_KEYS[service] ?? [], env);
