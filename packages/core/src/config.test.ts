import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_JWT_ISSUER, loadConfig } from './config.js';

const valid = { JWT_SECRET: 's'.repeat(32), CREDENTIAL_ENCRYPTION_KEY: 'ab'.repeat(32) };

/** The ConfigError a bad environment gives (fails the test if none is thrown). */
function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('parses a minimal valid environment with the defaults', () => {
    const config = loadConfig(valid);
    expect(config.JWT_SECRET).toBe(valid.JWT_SECRET);
    expect(config.JWT_EXPIRES_IN).toBe('24h');
    expect(config.JWT_ISSUER).toBe(DEFAULT_JWT_ISSUER);
    expect(DEFAULT_JWT_ISSUER).toMatch(/^[a-z0-9]+-gateway$/);
    expect(config.MCP_SERVER_URL).toBe('http://localhost:8080');
    expect(config.JWT_EXTERNAL_ISSUERS).toEqual([]);
    expect(config.ALLOW_SELF_REGISTRATION).toBe(true);
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.PORT).toBeUndefined();
  });

  it('reads the optional variables', () => {
    const config = loadConfig({
      ...valid,
      JWT_ISSUER: 'acme',
      JWT_EXPIRES_IN: '15m',
      PORT: '3001',
      DATABASE_URL: 'postgresql://db/app',
      ALLOW_SELF_REGISTRATION: 'false',
      JWT_EXTERNAL_ISSUERS: JSON.stringify([{ issuer: 'https://idp', jwksUri: 'https://idp/jwks', audience: 'gw' }]),
    });
    expect(config).toMatchObject({
      JWT_ISSUER: 'acme',
      JWT_EXPIRES_IN: '15m',
      PORT: 3001,
      DATABASE_URL: 'postgresql://db/app',
      ALLOW_SELF_REGISTRATION: false,
      JWT_EXTERNAL_ISSUERS: [{ issuer: 'https://idp', jwksUri: 'https://idp/jwks', audience: 'gw' }],
    });
  });

  it('treats blank variables as unset', () => {
    const config = loadConfig({
      ...valid,
      PORT: '',
      JWT_EXPIRES_IN: ' ',
      MCP_SERVER_URL: '',
      JWT_ISSUER: '',
      LOG_LEVEL: '',
    });
    expect(config.PORT).toBeUndefined();
    expect(config.JWT_EXPIRES_IN).toBe('24h');
    expect(config.MCP_SERVER_URL).toBe('http://localhost:8080');
    expect(config.JWT_ISSUER).toBe(DEFAULT_JWT_ISSUER);
    expect(config.LOG_LEVEL).toBe('info');
    expect(configError({ ...valid, JWT_SECRET: '' }).problems).toEqual([
      { variable: 'JWT_SECRET', message: 'is required' },
    ]);
  });

  it('names every bad variable in one error', () => {
    const error = configError({ JWT_SECRET: 'short', CREDENTIAL_ENCRYPTION_KEY: 'xyz' });
    expect(error.problems.map((p) => p.variable)).toEqual(['JWT_SECRET', 'CREDENTIAL_ENCRYPTION_KEY']);
    expect(error.message).toContain('JWT_SECRET must be at least 32 characters');
    expect(error.message).toContain('CREDENTIAL_ENCRYPTION_KEY must be 64 hex characters');
    // The values themselves are secrets and stay out of the message.
    expect(error.message).not.toContain('short');
    expect(error.message).not.toContain('xyz');
  });

  it('requires JWT_SECRET; the sealing keys are each required by the services that hold them (service-kit)', () => {
    expect(configError({}).problems).toEqual([{ variable: 'JWT_SECRET', message: 'is required' }]);
    const config = loadConfig({ JWT_SECRET: valid.JWT_SECRET });
    expect([
      config.CREDENTIAL_ENCRYPTION_KEY,
      config.PLATFORM_SECRETS_KEY,
      config.PLATFORM_SECRETS_PREVIOUS_KEYS,
    ]).toEqual([undefined, undefined, []]);
    expect(
      configError({ ...valid, PLATFORM_SECRETS_KEY: 'xyz', PLATFORM_SECRETS_PREVIOUS_KEYS: 'ab' }).problems,
    ).toEqual([
      { variable: 'PLATFORM_SECRETS_KEY', message: 'must be 64 hex characters (32 bytes)' },
      {
        variable: 'PLATFORM_SECRETS_PREVIOUS_KEYS',
        message: 'must be a comma-separated list of 64-hex-character keys',
      },
    ]);
  });

  it('rejects malformed JWT_EXTERNAL_ISSUERS', () => {
    expect(configError({ ...valid, JWT_EXTERNAL_ISSUERS: '[{"issuer":' }).problems).toEqual([
      { variable: 'JWT_EXTERNAL_ISSUERS', message: 'is not valid JSON' },
    ]);
    const notAnArray = configError({ ...valid, JWT_EXTERNAL_ISSUERS: '{"issuer":"x"}' }).problems[0];
    expect(notAnArray?.variable).toBe('JWT_EXTERNAL_ISSUERS');
    const both = configError({
      ...valid,
      JWT_EXTERNAL_ISSUERS: JSON.stringify([
        { issuer: 'x', audience: 'gw', jwksUri: 'https://x/jwks', secret: 'k'.repeat(32) },
      ]),
    }).problems[0];
    expect(both?.message).toContain('exactly one of jwksUri or secret');
    expect(both?.message).toContain('[0]');
  });

  it('rejects an unknown DATABASE_URL scheme', () => {
    expect(configError({ ...valid, DATABASE_URL: 'mysql://db/app' }).problems).toEqual([
      { variable: 'DATABASE_URL', message: 'must start with file:, postgres:// or postgresql://' },
    ]);
    expect(loadConfig({ ...valid, DATABASE_URL: 'file:./data/gateway' }).DATABASE_URL).toBe('file:./data/gateway');
  });

  it('rejects a bad duration, port and redis url', () => {
    const error = configError({ ...valid, JWT_EXPIRES_IN: 'tomorrow', PORT: '70000', REDIS_URL: 'http://cache' });
    expect(error.problems.map((p) => p.variable).sort()).toEqual(['JWT_EXPIRES_IN', 'PORT', 'REDIS_URL']);
  });

  it('requires an audience for every external issuer', () => {
    const missing = configError({
      ...valid,
      JWT_EXTERNAL_ISSUERS: JSON.stringify([{ issuer: 'https://idp', jwksUri: 'https://idp/jwks' }]),
    }).problems[0];
    expect(missing?.variable).toBe('JWT_EXTERNAL_ISSUERS');
    expect(missing?.message).toContain('audience is required');
  });

  it("reads an external issuer's interactive login and refuses a malformed one without echoing its secret", () => {
    const login = {
      id: 'corp-sso',
      name: 'Corp SSO',
      clientId: 'gateway',
      clientSecret: 'very-secret-value',
      scopes: ['openid', 'email'],
    };
    const item = { issuer: 'https://idp.example', jwksUri: 'https://idp.example/jwks', audience: 'gw', login };
    expect(loadConfig({ ...valid, JWT_EXTERNAL_ISSUERS: JSON.stringify([item]) }).JWT_EXTERNAL_ISSUERS).toEqual([item]);
    const problem = (items: unknown[]) =>
      configError({ ...valid, JWT_EXTERNAL_ISSUERS: JSON.stringify(items) }).problems[0];
    const badId = problem([{ ...item, login: { ...login, id: 'Corp SSO/../x' } }]);
    expect(badId?.message).toContain('login.id must be a lowercase slug');
    expect(problem([{ ...item, login: { ...login, clientSecret: '' } }])?.message).toContain(
      'login.clientSecret is required',
    );
    expect(problem([{ ...item, login: { ...login, extra: 1 } }])?.variable).toBe('JWT_EXTERNAL_ISSUERS');
    expect(
      problem([{ issuer: 'https://idp.example', secret: 'k'.repeat(32), audience: 'gw', login }])?.message,
    ).toContain('login needs an issuer URL with jwksUri');
    expect(problem([item, { ...item, issuer: 'https://other.example' }])?.message).toBe('must not repeat a login.id');
    for (const items of [[{ ...item, login: { ...login, id: 'BAD ID' } }], [item, item]]) {
      expect(JSON.stringify(configError({ ...valid, JWT_EXTERNAL_ISSUERS: JSON.stringify(items) }))).not.toContain(
        'very-secret-value',
      );
    }
  });

  it('parses EGRESS_POLICY, EGRESS_ALLOW and TRUSTED_PROXIES', () => {
    const config = loadConfig({
      ...valid,
      EGRESS_POLICY: 'public-only',
      EGRESS_ALLOW: '10.0.0.0/8, vault.internal,',
      TRUSTED_PROXIES: '10.0.0.1,fd00::/8',
    });
    expect(config.EGRESS_POLICY).toBe('public-only');
    expect(config.EGRESS_ALLOW).toEqual(['10.0.0.0/8', 'vault.internal']);
    expect(config.TRUSTED_PROXIES).toEqual(['10.0.0.1', 'fd00::/8']);
    const defaults = loadConfig(valid);
    expect(defaults.EGRESS_POLICY).toBeUndefined();
    expect(defaults).toMatchObject({ EGRESS_ALLOW: [], TRUSTED_PROXIES: [] });
    const error = configError({
      ...valid,
      EGRESS_POLICY: 'none',
      EGRESS_ALLOW: 'http://x/',
      TRUSTED_PROXIES: '10.0.0.0/40',
    });
    expect(error.problems.map((p) => p.variable).sort()).toEqual(['EGRESS_ALLOW', 'EGRESS_POLICY', 'TRUSTED_PROXIES']);
  });
});
