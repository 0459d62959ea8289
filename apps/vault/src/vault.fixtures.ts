import { generateApiKey, generateRuntimeToken } from '@agentgw/auth';
import { ManualClock, newId, newRequestId } from '@agentgw/core';
import { json, type ApiKeyScope, type CredentialAuthType, type RoleName } from '@agentgw/db';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { createUser, tokenFor, type TestUser } from '@agentgw/testkit';
import { SignJWT } from 'jose';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { vaultService } from './service.js';

export const KEY_A = 'aa'.repeat(32);
export const KEY_B = 'bb'.repeat(32);
/** An external identity provider every test vault trusts (HS256), for users it has no account for. */
const PARTNER = {
  issuer: 'https://partner.example',
  audience: 'agentgw-tests',
  secret: 'partner-secret-that-is-at-least-32-chars',
};

export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

export interface VaultFixture {
  deps: TestDeps;
  /** The vault in the production shell. */
  app: TestHost['app'];
  clock: ManualClock;
  /** Every log line written, as JSON objects. */
  logs: Record<string, unknown>[];
  call(method: string, path: string, headers?: Record<string, string>, body?: unknown): Promise<Reply>;
  user(input?: {
    tenantId?: string | null;
    roles?: RoleName[];
  }): Promise<TestUser & { token: string; headers: Record<string, string> }>;
  apiKey(input: { scopes: ApiKeyScope[]; tenantId?: string | null }): Promise<string>;
  agent(input?: { tenantId?: string | null }): Promise<{ id: string; runtimeToken: string }>;
  provider(input: {
    serviceType: string;
    authType: CredentialAuthType;
    config?: Record<string, unknown>;
    tenantId?: string | null;
  }): Promise<void>;
  close(): Promise<void>;
}

/** A vault app on a fresh database of `backend`, with a movable clock and captured logs. */
export async function startVaultUnderTest(
  backend: 'pglite' | 'postgres',
  env: Record<string, string> = {},
): Promise<VaultFixture> {
  const clock = new ManualClock(new Date('2026-03-01T12:00:00Z'));
  const deps = await createTestDeps({
    backend,
    clock,
    env: { CREDENTIAL_ENCRYPTION_KEY: KEY_A, JWT_EXTERNAL_ISSUERS: JSON.stringify([PARTNER]), ...env },
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  deps.logger = pino({ level: 'debug' }, sink);
  const { app } = await testHost(vaultService, deps);

  return {
    deps,
    app,
    clock,
    logs,
    async call(method, path, headers = {}, body) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
      }
      const res = await app.request(path, init);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async user(input = {}) {
      const user = await createUser(deps, {
        email: `${newId()}@example.test`,
        roles: input.roles ?? [],
        tenantId: input.tenantId ?? null,
      });
      const token = await tokenFor(deps, user);
      return { ...user, token, headers: { authorization: `Bearer ${token}` } };
    },
    async apiKey({ scopes, tenantId = null }) {
      const key = generateApiKey();
      // Auth refuses a key without a live creator; an admin's key may act for any user.
      const creator = await createUser(deps, { email: `${newId()}@example.test`, roles: ['admin'], tenantId: null });
      await deps.db
        .insertInto('api_keys')
        .values({
          id: newId(),
          name: 'test key',
          key_hash: key.hash,
          key_prefix: key.prefix,
          scopes,
          user_id: creator.id,
          tenant_id: tenantId,
        })
        .execute();
      return key.token;
    },
    async agent({ tenantId = null } = {}) {
      const token = generateRuntimeToken();
      const id = newId();
      await deps.db
        .insertInto('agents')
        .values({
          id,
          name: 'test agent',
          description: null,
          upstream_url: 'http://127.0.0.1:9/',
          upstream_secret_enc: null,
          required_credentials: json([]),
          tenant_id: tenantId,
          owner_id: null,
          runtime_token_hash: token.hash,
          runtime_token_prefix: token.prefix,
        })
        .execute();
      return { id, runtimeToken: token.token };
    },
    async provider({ serviceType, authType, config = {}, tenantId = null }) {
      await deps.db
        .insertInto('credential_providers')
        .values({
          id: newId(),
          name: serviceType,
          service_type: serviceType,
          auth_type: authType,
          description: null,
          config: json(config),
          tenant_id: tenantId,
        })
        .execute();
    },
    close: () => deps.close(),
  };
}

/**
 * Registers the hooks of a suite that shares one vault (one database per backend: every test
 * works with users of its own), emptied of credential providers and logs before each test. The
 * fixture returned is filled in by `beforeAll`, so use it only inside hooks and tests.
 */
export function useSharedVault(backend: 'pglite' | 'postgres'): VaultFixture {
  const f = {} as VaultFixture;
  beforeAll(async () => {
    Object.assign(f, await startVaultUnderTest(backend));
  });
  afterAll(async () => {
    await f.close();
  });
  beforeEach(async () => {
    await f.deps.db.deleteFrom('credential_providers').execute();
    f.logs.length = 0;
  });
  return f;
}

export const sessionHeaders = async (
  f: VaultFixture,
  user: TestUser,
  agentId: string,
): Promise<Record<string, string>> => {
  const { token } = await f.deps.auth.issueSessionToken({
    endUserId: user.id,
    email: user.email,
    roles: user.roles,
    tenantId: user.tenantId,
    agentId,
    requestId: newRequestId(),
  });
  return { 'x-gateway-session-token': token, 'x-agent-id': agentId };
};

/** A user JWT from the external issuer, valid for five minutes of the fixture's clock. */
export const partnerToken = (f: VaultFixture, sub: string, email: string): Promise<string> => {
  const iat = Math.floor(f.clock.now().getTime() / 1000);
  return new SignJWT({ email })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(PARTNER.issuer)
    .setAudience(PARTNER.audience)
    .setSubject(sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 300)
    .sign(new TextEncoder().encode(PARTNER.secret));
};
