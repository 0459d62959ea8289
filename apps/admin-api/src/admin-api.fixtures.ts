import { createUser, tokenFor, type TestUser } from '@agentgw/testkit';
import type { RoleName } from '@agentgw/db';
import type { TestBackend } from '@agentgw/db/testing';
import type { ServiceDeps } from '@agentgw/service-kit';
import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { adminApiService } from './service.js';

// Response bodies are whatever JSON the API answered; tests assert on their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface TestResponse {
  status: number;
  body: Json;
  headers: Headers;
}

export interface CallOptions {
  token?: string;
  /** Serialized as JSON. */
  body?: unknown;
  /** Sent verbatim (for malformed JSON). */
  rawBody?: string;
  headers?: Record<string, string>;
}

type Requester = { request(path: string, init?: RequestInit): Response | Promise<Response> };

export type Call = (method: string, path: string, options?: CallOptions) => Promise<TestResponse>;

/** `call(method, path, options)` against an app through `app.request`, JSON in and out. */
export function testClient(app: Requester): Call {
  return async function call(method: string, path: string, options: CallOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await app.request(path, { method, headers, body });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
}

export type Caller = TestUser & { token: string };

let sequence = 0;

/** A user with the given roles and tenant, inserted directly, plus a login JWT for them. */
export async function signedInUser(
  deps: Pick<ServiceDeps, 'db' | 'auth'>,
  roles: RoleName[],
  tenantId: string | null = null,
): Promise<Caller> {
  sequence += 1;
  const user = await createUser(deps, {
    email: `${roles.join('-') || 'nobody'}-${sequence}-${Date.now()}@example.test`,
    roles,
    tenantId,
  });
  return { ...user, token: await tokenFor(deps, user) };
}

export interface AdminApiFixture {
  deps: TestDeps;
  call: Call;
  admin: Caller;
  /** tenant_admin of acme. */
  acmeAdmin: Caller;
  /** tenant_admin of globex. */
  globexAdmin: Caller;
  /** agent_creator of acme. */
  acmeCreator: Caller;
}

/** The common set-up of an admin API suite: fresh deps on `backend`, a client on the app and the usual callers. */
export async function startAdminApiUnderTest(backend: TestBackend): Promise<AdminApiFixture> {
  const deps = await createTestDeps({ backend });
  try {
    return {
      deps,
      call: testClient(await testHost(adminApiService, deps)),
      admin: await signedInUser(deps, ['admin']),
      acmeAdmin: await signedInUser(deps, ['tenant_admin'], 'acme'),
      globexAdmin: await signedInUser(deps, ['tenant_admin'], 'globex'),
      acmeCreator: await signedInUser(deps, ['agent_creator'], 'acme'),
    };
  } catch (err) {
    await deps.close();
    throw err;
  }
}
