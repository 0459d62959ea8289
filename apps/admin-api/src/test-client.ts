import { createUser, tokenFor, type TestUser } from '@agentgw/testkit';
import type { RoleName } from '@agentgw/db';
import type { ServiceDeps } from '@agentgw/service-kit';

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

/** `call(method, path, options)` against an app through `app.request`, JSON in and out. */
export function testClient(app: Requester) {
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
  const user = await createUser(deps, { email: `${roles.join('-') || 'nobody'}-${sequence}-${Date.now()}@example.test`, roles, tenantId });
  return { ...user, token: await tokenFor(deps, user) };
}
