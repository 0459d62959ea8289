import { ROLE_PERMISSIONS, type Permission } from '@agentgw/auth';
import type { RoleName } from '@agentgw/db';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminApiService } from './service.js';
import { signedInUser, testClient, type Caller } from './admin-api.fixtures.js';

/**
 * The role → permission table this API is meant to enforce, written out independently of the
 * auth package so a change there shows up here as a failing test, not as a silent widening.
 */
const EXPECTED: Record<RoleName, Permission[]> = {
  admin: [
    'agent:create',
    'agent:read',
    'agent:update:own',
    'agent:update:all',
    'agent:delete:own',
    'agent:delete:all',
    'provider:read',
    'provider:create',
    'provider:update',
    'provider:delete',
    'user:manage',
    'apikey:manage',
    'audit:read:all',
    'audit:read:tenant',
    'audit:stats',
  ],
  tenant_admin: [
    'agent:create',
    'agent:read',
    'agent:update:own',
    'agent:update:all',
    'agent:delete:own',
    'agent:delete:all',
    'provider:read',
    'provider:create',
    'provider:update',
    'provider:delete',
    'apikey:manage',
    'audit:read:tenant',
  ],
  agent_creator: ['agent:create', 'agent:read', 'agent:update:own', 'agent:delete:own', 'provider:read'],
};

const MISSING = '00000000-0000-4000-8000-000000000000';

interface Endpoint {
  method: string;
  path: string;
  /** Any one of these lets the caller through; empty = any authenticated user. */
  anyOf: Permission[];
  /** A valid body; `who` makes names unique per caller so creates do not collide. */
  body?: (who: Caller) => unknown;
}

const ENDPOINTS: Endpoint[] = [
  // users
  { method: 'GET', path: '/api/v1/admin/users', anyOf: ['user:manage'] },
  {
    method: 'POST',
    path: '/api/v1/admin/users',
    anyOf: ['user:manage'],
    body: (who) => ({ email: `made-by-${who.id}@example.test`, password: 'password-123' }),
  },
  { method: 'GET', path: `/api/v1/admin/users/${MISSING}`, anyOf: ['user:manage'] },
  { method: 'PUT', path: `/api/v1/admin/users/${MISSING}`, anyOf: ['user:manage'], body: () => ({ name: 'x' }) },
  { method: 'DELETE', path: `/api/v1/admin/users/${MISSING}`, anyOf: ['user:manage'] },
  {
    method: 'POST',
    path: `/api/v1/admin/users/${MISSING}/roles`,
    anyOf: ['user:manage'],
    body: () => ({ role: 'agent_creator' }),
  },
  { method: 'DELETE', path: `/api/v1/admin/users/${MISSING}/roles/agent_creator`, anyOf: ['user:manage'] },
  // agents
  {
    method: 'POST',
    path: '/api/v1/admin/agents',
    anyOf: ['agent:create'],
    body: () => ({ name: 'matrix', upstreamUrl: 'https://runtime.example.test' }),
  },
  { method: 'GET', path: '/api/v1/admin/agents', anyOf: ['agent:read'] },
  { method: 'GET', path: `/api/v1/admin/agents/${MISSING}`, anyOf: ['agent:read'] },
  {
    method: 'PUT',
    path: `/api/v1/admin/agents/${MISSING}`,
    anyOf: ['agent:update:own', 'agent:update:all'],
    body: () => ({ name: 'x' }),
  },
  { method: 'DELETE', path: `/api/v1/admin/agents/${MISSING}`, anyOf: ['agent:delete:own', 'agent:delete:all'] },
  { method: 'POST', path: `/api/v1/admin/agents/${MISSING}/disable`, anyOf: ['agent:update:own', 'agent:update:all'] },
  { method: 'POST', path: `/api/v1/admin/agents/${MISSING}/enable`, anyOf: ['agent:update:own', 'agent:update:all'] },
  {
    method: 'POST',
    path: `/api/v1/admin/agents/${MISSING}/regenerate-token`,
    anyOf: ['agent:update:own', 'agent:update:all'],
  },
  // API keys
  { method: 'GET', path: '/api/v1/admin/api-keys', anyOf: ['apikey:manage'] },
  { method: 'POST', path: '/api/v1/admin/api-keys', anyOf: ['apikey:manage'], body: () => ({ name: 'matrix' }) },
  { method: 'DELETE', path: `/api/v1/admin/api-keys/${MISSING}`, anyOf: ['apikey:manage'] },
  // tool providers (list, get and tools need only a JWT)
  { method: 'GET', path: '/api/v1/admin/tool-providers', anyOf: [] },
  {
    method: 'POST',
    path: '/api/v1/admin/tool-providers',
    anyOf: ['provider:create'],
    body: (who) => ({ name: `matrix-${who.id}`, pattern: 'matrix_*', endpoint: 'https://mcp.example.test/mcp' }),
  },
  { method: 'GET', path: `/api/v1/admin/tool-providers/${MISSING}`, anyOf: [] },
  {
    method: 'PUT',
    path: `/api/v1/admin/tool-providers/${MISSING}`,
    anyOf: ['provider:update'],
    body: () => ({ name: 'x' }),
  },
  { method: 'DELETE', path: `/api/v1/admin/tool-providers/${MISSING}`, anyOf: ['provider:delete'] },
  { method: 'GET', path: `/api/v1/admin/tool-providers/${MISSING}/tools`, anyOf: [] },
  // provider access
  { method: 'GET', path: '/api/v1/admin/provider-access', anyOf: ['provider:read'] },
  { method: 'GET', path: `/api/v1/admin/provider-access/by-provider/${MISSING}`, anyOf: ['provider:read'] },
  { method: 'GET', path: `/api/v1/admin/provider-access/${MISSING}`, anyOf: ['provider:read'] },
  {
    method: 'POST',
    path: '/api/v1/admin/provider-access',
    anyOf: ['provider:update'],
    body: (who) => ({ subjectType: 'user', subjectId: who.id, providerId: '*', action: 'allow' }),
  },
  {
    method: 'PUT',
    path: `/api/v1/admin/provider-access/${MISSING}`,
    anyOf: ['provider:update'],
    body: () => ({ action: 'deny' }),
  },
  { method: 'DELETE', path: `/api/v1/admin/provider-access/${MISSING}`, anyOf: ['provider:update'] },
  {
    method: 'POST',
    path: '/api/v1/admin/provider-access/evaluate',
    anyOf: ['provider:update'],
    body: (who) => ({ userId: who.id, providerId: '*', toolName: 'matrix_tool' }),
  },
  { method: 'GET', path: `/api/v1/admin/provider-access/agent/${MISSING}`, anyOf: ['provider:update'] },
  {
    method: 'PUT',
    path: `/api/v1/admin/provider-access/agent/${MISSING}`,
    anyOf: ['provider:update'],
    body: () => ({ rules: [] }),
  },
  // credential providers
  { method: 'GET', path: '/api/v1/credential-providers', anyOf: ['provider:read'] },
  {
    method: 'POST',
    path: '/api/v1/credential-providers',
    anyOf: ['provider:create'],
    body: (who) => ({ name: 'matrix', serviceType: `matrix_${who.roles.join('_') || 'none'}`, authType: 'api_key' }),
  },
  { method: 'GET', path: `/api/v1/credential-providers/${MISSING}`, anyOf: ['provider:read'] },
  { method: 'GET', path: '/api/v1/credential-providers/by-service/matrix_missing', anyOf: ['provider:read'] },
  {
    method: 'PUT',
    path: `/api/v1/credential-providers/${MISSING}`,
    anyOf: ['provider:update'],
    body: () => ({ name: 'x' }),
  },
  { method: 'DELETE', path: `/api/v1/credential-providers/${MISSING}`, anyOf: ['provider:delete'] },
];

const CALLERS: [string, RoleName[]][] = [
  ['admin', ['admin']],
  ['tenant_admin', ['tenant_admin']],
  ['agent_creator', ['agent_creator']],
  ['no role', []],
];

const allowedFor = (roles: RoleName[], endpoint: Endpoint): boolean =>
  endpoint.anyOf.length === 0 || endpoint.anyOf.some((p) => roles.some((r) => EXPECTED[r].includes(p)));

it('the expected table mirrors the auth package role table', () => {
  for (const role of Object.keys(EXPECTED) as RoleName[]) {
    expect([...ROLE_PERMISSIONS[role]].sort(), role).toEqual([...EXPECTED[role]].sort());
  }
});

describe.each(testBackends())('role matrix (%s)', (backend) => {
  let deps: TestDeps;
  let call: ReturnType<typeof testClient>;
  const callers = new Map<string, Caller>();

  beforeAll(async () => {
    deps = await createTestDeps({ backend });
    call = testClient(await testHost(adminApiService, deps));
    for (const [label, roles] of CALLERS)
      callers.set(label, await signedInUser(deps, roles, roles.includes('admin') ? null : 'acme'));
  });
  afterAll(() => deps?.close());

  it('answers 401 on every endpoint without credentials', async () => {
    for (const endpoint of ENDPOINTS) {
      const res = await call(endpoint.method, endpoint.path, { body: endpoint.body?.(callers.get('admin')!) });
      expect(res.status, `${endpoint.method} ${endpoint.path}`).toBe(401);
    }
  });

  describe.each(CALLERS)('%s', (label, roles) => {
    it.each(ENDPOINTS.map((e) => [`${e.method} ${e.path}`, e] as const))('%s', async (_name, endpoint) => {
      const who = callers.get(label)!;
      const res = await call(endpoint.method, endpoint.path, { token: who.token, body: endpoint.body?.(who) });
      if (allowedFor(roles, endpoint)) {
        expect([200, 201, 404], JSON.stringify(res.body)).toContain(res.status);
        // A 404 must come from the handler (missing id), not from a path no route matches.
        if (res.status === 404) expect(res.body.message).not.toMatch(/^No route/);
      } else {
        expect(res.status, JSON.stringify(res.body)).toBe(403);
        expect(res.body.code).toBe('FORBIDDEN');
      }
    });
  });
});
