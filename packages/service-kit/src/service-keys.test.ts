import { ConfigError } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { ALL_KEYS, loadConfigWithKeys, loadServiceConfig } from './service-keys.js';

const JWT_SECRET = 'j'.repeat(32);
const CREDENTIAL = 'ab'.repeat(32);
const PLATFORM = 'cd'.repeat(32);

function problems(load: () => unknown): ConfigError['problems'] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadServiceConfig: the key boundary', () => {
  it('starts every service other than the vault without CREDENTIAL_ENCRYPTION_KEY', () => {
    for (const service of ['admin-api', 'invoke-proxy', 'mcp-gateway']) {
      expect(
        loadServiceConfig(service, { JWT_SECRET, PLATFORM_SECRETS_KEY: PLATFORM }).CREDENTIAL_ENCRYPTION_KEY,
      ).toBeUndefined();
    }
    for (const service of ['confirmation-hub', 'audit-writer'])
      expect(loadServiceConfig(service, { JWT_SECRET }).PLATFORM_SECRETS_KEY).toBeUndefined();
  });

  it('refuses the vault without the credential key, and a platform service without the platform key, saying why', () => {
    expect(problems(() => loadServiceConfig('vault', { JWT_SECRET, PLATFORM_SECRETS_KEY: PLATFORM }))).toEqual([
      {
        variable: 'CREDENTIAL_ENCRYPTION_KEY',
        message: "is required by vault (64 hex characters; it opens users' credentials)",
      },
    ]);
    // The vault opens OAuth client secrets of credential providers, sealed under the platform key.
    expect(
      problems(() => loadServiceConfig('vault', { JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY: CREDENTIAL })).map(
        (p) => p.variable,
      ),
    ).toEqual(['PLATFORM_SECRETS_KEY']);
    expect(
      problems(() => loadServiceConfig('admin-api', { JWT_SECRET, CREDENTIAL_ENCRYPTION_KEY: CREDENTIAL })),
    ).toEqual([
      {
        variable: 'PLATFORM_SECRETS_KEY',
        message:
          "is required by admin-api (64 hex characters; it seals agents' and providers' secrets, MCP session ids and audit ids)",
      },
    ]);
  });

  it('names every problem at once, and refuses one key for both rings', () => {
    expect(problems(() => loadConfigWithKeys('the gateway', ALL_KEYS, {})).map((p) => p.variable)).toEqual([
      'JWT_SECRET',
      'CREDENTIAL_ENCRYPTION_KEY',
      'PLATFORM_SECRETS_KEY',
    ]);
    expect(
      problems(() =>
        loadConfigWithKeys('the gateway', ALL_KEYS, {
          JWT_SECRET,
          CREDENTIAL_ENCRYPTION_KEY: CREDENTIAL,
          PLATFORM_SECRETS_KEY: CREDENTIAL.toUpperCase(),
        }),
      ),
    ).toEqual([{ variable: 'PLATFORM_SECRETS_KEY', message: 'must differ from CREDENTIAL_ENCRYPTION_KEY' }]);
    expect(
      loadConfigWithKeys('the gateway', ALL_KEYS, {
        JWT_SECRET,
        CREDENTIAL_ENCRYPTION_KEY: CREDENTIAL,
        PLATFORM_SECRETS_KEY: PLATFORM,
      }).PLATFORM_SECRETS_KEY,
    ).toBe(PLATFORM);
  });
});
