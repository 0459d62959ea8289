import { migrateToLatest, openDatabase } from '@agentgw/db';
import { sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_KEYS } from '@agentgw/service-kit';
import { authHeaders, freePort, startRecordingUpstream } from '@agentgw/testkit';
import { cleanEnv, run, startGatewayProcessUnderTest, type Server } from './cli-process.fixtures.js';

const SERVICES = ['admin-api', 'invoke-proxy', 'mcp-gateway', 'vault', 'confirmation-hub', 'audit-writer'] as const;
const mainOf = (service: string) => fileURLToPath(new URL(`../../${service}/src/main.ts`, import.meta.url));
const appDir = fileURLToPath(new URL('..', import.meta.url));
/** pino's JSON line from serve(): `"port":N ... "msg":"listening"`. */
const LISTENING = /"port":(\d+)[^\n]*"msg":"listening"/;

const KEYS = { CREDENTIAL_ENCRYPTION_KEY: 'ab'.repeat(32), PLATFORM_SECRETS_KEY: 'cd'.repeat(32) };
/** What compose and k8s give `service`: the JWT secret and only the sealing keys it holds (the vault alone the credential key). */
const secretsOf = (service: string) => ({
  JWT_SECRET: 'distributed-test-secret-0123456789abcdef',
  ...Object.fromEntries((SERVICE_KEYS[service] ?? []).map((key) => [key, KEYS[key]])),
});

describe('distributed main.ts without PostgreSQL and Redis', () => {
  it.each(SERVICES)(
    '%s, given only its own keys, passes the configuration and names DATABASE_URL and REDIS_URL',
    async (service) => {
      const result = await run(['--import', 'tsx', mainOf(service)], {
        cwd: appDir,
        env: cleanEnv(secretsOf(service)),
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('DATABASE_URL must be a postgres:// URL');
      expect(result.stderr).toContain('REDIS_URL is required');
      expect(result.stderr).not.toMatch(/^\s+at /m);
    },
    60_000,
  );

  it('only the vault holds CREDENTIAL_ENCRYPTION_KEY; the vault refuses to start without it, in one line, before connecting anywhere', async () => {
    expect(
      Object.entries(SERVICE_KEYS)
        .filter(([, keys]) => keys.includes('CREDENTIAL_ENCRYPTION_KEY'))
        .map(([name]) => name),
    ).toEqual(['vault']);
    const result = await run(['--import', 'tsx', mainOf('vault')], {
      cwd: appDir,
      env: cleanEnv({ ...secretsOf('mcp-gateway') }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      "Invalid configuration: CREDENTIAL_ENCRYPTION_KEY is required by vault (64 hex characters; it opens users' credentials)",
    );
  }, 180_000);

  it('mcp-gateway without PLATFORM_SECRETS_KEY refuses to start, and no service accepts the credential key as the platform key', async () => {
    // Given the vault's credential key alone (the vault now holds the platform key too, for OAuth client secrets).
    const missing = await run(['--import', 'tsx', mainOf('mcp-gateway')], {
      cwd: appDir,
      env: cleanEnv({ ...secretsOf('audit-writer'), CREDENTIAL_ENCRYPTION_KEY: KEYS.CREDENTIAL_ENCRYPTION_KEY }),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Invalid configuration: PLATFORM_SECRETS_KEY is required by mcp-gateway');
    const same = await run(['--import', 'tsx', mainOf('vault')], {
      cwd: appDir,
      env: cleanEnv({ ...secretsOf('vault'), PLATFORM_SECRETS_KEY: KEYS.CREDENTIAL_ENCRYPTION_KEY }),
    });
    expect(same.code).toBe(1);
    expect(same.stderr).toContain('PLATFORM_SECRETS_KEY must differ from CREDENTIAL_ENCRYPTION_KEY');
    expect(same.stderr).not.toContain(KEYS.CREDENTIAL_ENCRYPTION_KEY);
  }, 180_000);
});

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

describe.skipIf(!pgUrl || !redisUrl)('distributed main.ts on PostgreSQL + Redis', () => {
  const database = `agw_main_${randomBytes(6).toString('hex')}`;
  let databaseUrl: string;
  const withDatabase = (name: string) => {
    const url = new URL(pgUrl!);
    url.pathname = `/${name}`;
    return url.toString();
  };

  beforeAll(async () => {
    const admin = await openDatabase({ url: pgUrl! });
    try {
      await sql.raw(`create database ${database}`).execute(admin.db);
    } finally {
      await admin.close();
    }
    databaseUrl = withDatabase(database);
    const fresh = await openDatabase({ url: databaseUrl });
    try {
      await migrateToLatest(fresh.db);
    } finally {
      await fresh.close();
    }
  }, 180_000);

  afterAll(async () => {
    const admin = await openDatabase({ url: pgUrl! });
    try {
      await sql.raw(`drop database if exists ${database} with (force)`).execute(admin.db);
    } finally {
      await admin.close();
    }
  });

  const env = (service: string) =>
    cleanEnv({
      ...secretsOf(service),
      LOG_LEVEL: 'info',
      PORT: '0',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl!,
      VAULT_URL: 'http://127.0.0.1:7604',
    });

  it.each(SERVICES)(
    '%s boots, reports healthy PostgreSQL and Redis, keeps /metrics on loopback, and stops gracefully on SIGTERM',
    async (service) => {
      const metricsPort = await freePort();
      const server = await startGatewayProcessUnderTest(['--import', 'tsx', mainOf(service)], {
        cwd: appDir,
        env: { ...env(service), METRICS_PORT: String(metricsPort) },
        ready: LISTENING,
      });
      try {
        const res = await fetch(`http://127.0.0.1:${server.port}/health`);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ status: 'ok', service, checks: { database: 'ok', redis: 'ok' } });
        // No METRICS_TOKEN: refused on the service's port, served on 127.0.0.1:METRICS_PORT.
        expect((await fetch(`http://127.0.0.1:${server.port}/metrics`)).status).toBe(404);
        expect(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).toContain(
          'agentgw_http_requests_total',
        );
      } finally {
        const stopped = await server.stop();
        expect(stopped.code).toBe(0);
      }
    },
    60_000,
  );

  it('invoke-proxy resolves credentials through the vault process over HTTP, and opens the upstream secret admin-api sealed', async () => {
    const upstream = await startRecordingUpstream();
    const admin = { ADMIN_EMAIL: 'dist-admin@example.com', ADMIN_PASSWORD: 'dist-password-1' };
    const start = (service: string, extra: Record<string, string> = {}) =>
      startGatewayProcessUnderTest(['--import', 'tsx', mainOf(service)], {
        cwd: appDir,
        env: { ...env(service), ...extra },
        ready: LISTENING,
      });
    const servers: Server[] = [];
    try {
      const adminApi = await start('admin-api', admin);
      servers.push(adminApi);
      const vault = await start('vault');
      servers.push(vault);
      const invoke = await start('invoke-proxy', { VAULT_URL: `http://127.0.0.1:${vault.port}` });
      servers.push(invoke);

      const login = await fetch(`http://127.0.0.1:${adminApi.port}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: admin.ADMIN_EMAIL, password: admin.ADMIN_PASSWORD }),
      });
      expect(login.status).toBe(200);
      const headers = authHeaders(((await login.json()) as { token: string }).token);
      const created = await fetch(`http://127.0.0.1:${adminApi.port}/api/v1/admin/agents`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name: 'dist-bot',
          upstreamUrl: upstream.url,
          upstreamSecret: 'dist-upstream-secret',
          requiredCredentials: [{ serviceType: 'erp' }],
        }),
      });
      expect(created.status).toBe(201);
      const { agent } = (await created.json()) as { agent: { id: string } };
      const stored = await fetch(`http://127.0.0.1:${vault.port}/api/v1/credentials/apikey`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ serviceType: 'erp', apiKey: 'erp-key-9' }),
      });
      expect(stored.status).toBe(201);

      const invoked = await fetch(`http://127.0.0.1:${invoke.port}/api/v1/agents/${agent.id}/invoke`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: 'hello' }),
      });
      expect(invoked.status).toBe(200);
      expect(upstream.requests[0]?.headers['x-credential-erp']).toBe('erp-key-9');
      // Sealed by admin-api and opened by invoke-proxy under the platform key; neither holds the credential key.
      expect(upstream.requests[0]?.headers.authorization).toBe('Bearer dist-upstream-secret');
    } finally {
      for (const server of servers) await server.stop();
      await upstream.close();
    }
  }, 120_000);

  it('invoke-proxy names VAULT_URL when it is missing', async () => {
    const { VAULT_URL: _unused, ...rest } = env('invoke-proxy');
    const result = await run(['--import', 'tsx', mainOf('invoke-proxy')], { cwd: appDir, env: rest });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('VAULT_URL is required by invoke-proxy');
  }, 180_000);
});
