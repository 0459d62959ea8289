import { secretBoxFor, generateRuntimeToken } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import { json } from '@agentgw/db';
import { serve, type RunningServer } from '@agentgw/service-kit';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { createUser, tokenFor, type TestUser } from '@agentgw/testkit';
import { createVault, directCredentialResolver, type Vault } from '@agentgw/credentials';
import type { RoleName } from '@agentgw/db';
import { createInvokeProxyService, type InvokeProxyOptions } from './service.js';

/** invoke-proxy on real deps (migrated database, real auth) and the real vault as resolver. */
export interface Harness {
  deps: TestDeps;
  vault: Vault;
  /** invoke-proxy in the production shell, started. */
  app: TestHost;
  /** A second host on the same deps (another replica, or other options). */
  newApp(options?: InvokeProxyOptions): Promise<TestHost>;
  close(): Promise<void>;
}

export async function startInvokeProxyUnderTest(
  backend: 'pglite' | 'postgres',
  options: InvokeProxyOptions = {},
): Promise<Harness> {
  const deps = await createTestDeps({ backend });
  const vault = createVault(deps);
  const newApp = (opts: InvokeProxyOptions = options) =>
    testHost(createInvokeProxyService({ credentials: () => directCredentialResolver(vault), ...opts }), deps);
  return { deps, vault, app: await newApp(), newApp, close: () => deps.close() };
}

export interface AgentInput {
  upstreamUrl: string;
  upstreamSecret?: string;
  tenantId?: string | null;
  requiredCredentials?: { serviceType: string; description?: string }[];
  isActive?: boolean;
  name?: string;
}

/** Inserts an agent row as admin-api would store it (secret sealed, token hashed). */
export async function insertAgent(deps: TestDeps, input: AgentInput): Promise<{ id: string; runtimeToken: string }> {
  const id = newId();
  const token = generateRuntimeToken();
  await deps.db
    .insertInto('agents')
    .values({
      id,
      name: input.name ?? 'Test agent',
      description: 'An agent under test',
      upstream_url: input.upstreamUrl,
      upstream_secret_enc:
        input.upstreamSecret === undefined ? null : secretBoxFor(deps.config).seal(input.upstreamSecret, id),
      required_credentials: json(input.requiredCredentials ?? []),
      tenant_id: input.tenantId ?? null,
      is_active: input.isActive ?? true,
      runtime_token_hash: token.hash,
      runtime_token_prefix: token.prefix,
    })
    .execute();
  return { id, runtimeToken: token.token };
}

export interface SignedInUser extends TestUser {
  token: string;
}

export async function signedInUser(
  deps: TestDeps,
  input: { email: string; roles?: RoleName[]; tenantId?: string | null },
): Promise<SignedInUser> {
  const user = await createUser(deps, input);
  return { ...user, token: await tokenFor(deps, user) };
}

/** The app on a real HTTP server (127.0.0.1, random port), for streaming and disconnect tests. */
export async function listen(harness: Harness, host: TestHost = harness.app): Promise<RunningServer & { url: string }> {
  const running = await serve(host.app, {
    port: 0,
    hostname: '127.0.0.1',
    deps: { close: async () => {} },
    logger: harness.deps.logger,
    handleSignals: false,
    shutdownTimeoutMs: 200,
  });
  return { ...running, url: `http://127.0.0.1:${running.port}` };
}

export const invokeRequest = (
  token: string,
  body: unknown = { message: 'hello' },
  headers: Record<string, string> = {},
) => ({
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
