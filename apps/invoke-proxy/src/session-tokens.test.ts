import { ManualClock } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { startRecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVisibleTo, SESSION_TOKEN_LIFETIME_SECONDS, tenantScope } from '@agentgw/auth';
import {
  SESSION_TOKEN_MIN_REMAINING_MS,
  SessionTokens,
  sessionClaimsFor,
  type SessionRequest,
} from './session-tokens.js';
import {
  insertAgent,
  invokeRequest,
  signedInUser,
  startInvokeProxyUnderTest,
  type Harness,
} from './invoke-proxy.fixtures.js';

describe('SessionTokens', () => {
  let deps: TestDeps;
  beforeAll(async () => {
    deps = await createTestDeps({ backend: 'pglite' });
  });
  afterAll(async () => {
    await deps.close();
  });

  const input: SessionRequest = {
    endUser: { id: 'u1', email: 'u1@example.test', roles: ['agent_creator'], tenantId: 't1' },
    agent: { id: 'a1', tenantId: 't1' },
    requestId: 'req_1',
  };
  const withUser = (patch: Partial<SessionRequest['endUser']>): SessionRequest => ({
    ...input,
    endUser: { ...input.endUser, ...patch },
  });

  it('reuses one verified token per agent and end user, and signs anew for any other identity', async () => {
    const tokens = new SessionTokens(deps.auth, new ManualClock(Date.now()));
    const first = await tokens.tokenFor(input);
    expect(await deps.auth.verifySessionToken(first, { agentId: 'a1' })).toMatchObject({
      endUserId: 'u1',
      tenantId: 't1',
      roles: ['agent_creator'],
    });
    expect(await tokens.tokenFor({ ...input, requestId: 'req_2' })).toBe(first);
    // An admin role is never carried, so it makes no other token.
    expect(await tokens.tokenFor(withUser({ roles: ['agent_creator', 'admin'] }))).toBe(first);
    const others = await Promise.all([
      tokens.tokenFor({ ...input, agent: { id: 'a2', tenantId: 't1' } }),
      tokens.tokenFor(withUser({ id: 'u2' })),
      tokens.tokenFor(withUser({ roles: [] })),
      tokens.tokenFor({ ...input, agent: { id: 'a1', tenantId: 't2' } }),
      tokens.tokenFor(withUser({ email: null })),
    ]);
    for (const other of others) expect(other).not.toBe(first);
    expect(await deps.auth.verifySessionToken(others[0], { agentId: 'a2' })).toMatchObject({ agentId: 'a2' });
  });

  it('hands a token out only while enough of its lifetime is left', async () => {
    const clock = new ManualClock(Date.now());
    const tokens = new SessionTokens(deps.auth, clock);
    const first = await tokens.tokenFor(input);
    clock.advance(SESSION_TOKEN_LIFETIME_SECONDS * 1000 - SESSION_TOKEN_MIN_REMAINING_MS - 1);
    expect(await tokens.tokenFor(input)).toBe(first);
    clock.advance(2);
    // Signed a second or more later than the first, so the `iat`/`exp` differ.
    await new Promise((r) => setTimeout(r, 1100));
    expect(await tokens.tokenFor(input)).not.toBe(first);
  });

  it.each([
    ['a global admin on a tenant agent', { roles: ['admin'], tenantId: null }, 't9', { roles: [], tenantId: 't9' }],
    [
      'a tenant_admin on its tenant agent',
      { roles: ['tenant_admin', 'agent_creator'], tenantId: 't1' },
      't1',
      { roles: ['agent_creator'], tenantId: 't1' },
    ],
    [
      'a tenant user on a global agent',
      { roles: ['agent_creator'], tenantId: 't1' },
      null,
      { roles: ['agent_creator'], tenantId: 't1' },
    ],
    [
      'a tenant-less admin on a global agent',
      { roles: ['admin'], tenantId: null },
      null,
      { roles: [], tenantId: null },
    ],
  ] as const)(
    'scopes the claims of %s to the agent tenant, without admin-class roles',
    (_label, user, agentTenant, expected) => {
      const claims = sessionClaimsFor({
        endUser: { id: 'u', email: null, ...user, roles: [...user.roles] },
        agent: { id: 'a', tenantId: agentTenant },
        requestId: 'r',
      });
      expect(claims).toMatchObject(expected);
    },
  );
});

describe.each(testBackends())('session tokens handed out by invoke (%s)', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startInvokeProxyUnderTest(backend);
  });
  afterAll(() => h?.close());

  it("an admin's invoke gives the upstream a token of the agent's tenant without the admin role: it sees nothing of other tenants", async () => {
    const up = await startRecordingUpstream();
    try {
      const admin = await signedInUser(h.deps, { email: `root-${Date.now()}@example.com`, roles: ['admin'] });
      const agent = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
      const otherTenantAgent = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-b' });
      expect((await h.app.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(admin.token))).status).toBe(200);
      const token = up.requests[0]!.headers['x-gateway-session-token'] as string;

      const principal = await h.deps.auth.authenticate(
        new Headers({ 'x-gateway-session-token': token, 'x-agent-id': agent.id }),
        'flexible',
      );
      expect(principal).toMatchObject({
        via: 'session_token',
        userId: admin.id,
        roles: [],
        tenantId: 'tenant-a',
        agentId: agent.id,
      });
      expect(principal.permissions.size).toBe(0);
      // Presented by the runtime of another tenant's agent it is refused (bound to the agent invoked).
      await expect(
        h.deps.auth.authenticate(
          new Headers({ 'x-gateway-session-token': token, 'x-agent-id': otherTenantAgent.id }),
          'flexible',
        ),
      ).rejects.toMatchObject({ status: 401 });
      // Tenancy as every MCP and tool-gate query applies it: tenant-a and global only.
      expect(tenantScope(principal)).toBe('tenant-a');
      expect([
        isVisibleTo(principal, 'tenant-a'),
        isVisibleTo(principal, null),
        isVisibleTo(principal, 'tenant-b'),
      ]).toEqual([true, true, false]);
    } finally {
      await up.close();
    }
  });
});
