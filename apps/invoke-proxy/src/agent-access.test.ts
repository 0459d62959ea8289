import { privateScope } from '@agentgw/auth';
import { testBackends } from '@agentgw/db/testing';
import { startRecordingUpstream, type RecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  insertAgent,
  invokeRequest,
  signedInUser,
  startInvokeProxyUnderTest,
  type Harness,
  type SignedInUser,
} from './invoke-proxy.fixtures.js';

describe.each(testBackends())('agent access (%s)', (backend) => {
  let h: Harness;
  let up: RecordingUpstream;
  let alice: SignedInUser; // tenant-a
  let bob: SignedInUser; // tenant-b
  let admin: SignedInUser; // global admin

  beforeAll(async () => {
    h = await startInvokeProxyUnderTest(backend);
    up = await startRecordingUpstream();
    alice = await signedInUser(h.deps, { email: 'alice@example.com', roles: ['agent_creator'], tenantId: 'tenant-a' });
    bob = await signedInUser(h.deps, { email: 'bob@example.com', roles: ['tenant_admin'], tenantId: 'tenant-b' });
    admin = await signedInUser(h.deps, { email: 'root@example.com', roles: ['admin'], tenantId: null });
  });
  afterAll(async () => {
    await up.close();
    await h.close();
  });

  const get = (path: string, token: string) => h.app.request(path, { headers: { authorization: `Bearer ${token}` } });
  const allThree = (agentId: string, token: string) =>
    Promise.all([
      get(`/api/v1/agents/${agentId}`, token),
      get(`/api/v1/agents/${agentId}/credentials-check`, token),
      h.app.request(`/api/v1/agents/${agentId}/invoke`, invokeRequest(token)),
    ]);

  it('shows public agent info without upstream URL, secret or token data', async () => {
    const agent = await insertAgent(h.deps, {
      name: 'Helper',
      upstreamUrl: `${up.url}/private-path`,
      upstreamSecret: 'do-not-show',
      tenantId: 'tenant-a',
      requiredCredentials: [{ serviceType: 'github', description: 'Reads repos' }],
    });
    const res = await get(`/api/v1/agents/${agent.id}`, alice.token);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      agent: {
        id: agent.id,
        name: 'Helper',
        description: 'An agent under test',
        isActive: true,
        requireConfirmation: false,
        requiredCredentials: [{ serviceType: 'github', description: 'Reads repos' }],
        tenantId: 'tenant-a',
      },
    });
    for (const secret of ['private-path', 'do-not-show', 'art_', 'runtime']) expect(text).not.toContain(secret);
  });

  it('requires authentication on all three routes', async () => {
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url });
    for (const res of await allThree(agent.id, 'not-a-jwt')) {
      expect(res.status).toBe(401);
    }
    const anonymous = await h.app.request(`/api/v1/agents/${agent.id}`);
    expect(anonymous.status).toBe(401);
  });

  it('answers 404 for an unknown agent', async () => {
    for (const res of await allThree('00000000-0000-4000-8000-000000000000', alice.token)) {
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it("isolates tenants: another tenant's agent is 404, global agents are visible, admins see all", async () => {
    const agentOfA = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    const globalAgent = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: null });
    const before = up.requests.length;

    for (const res of await allThree(agentOfA.id, bob.token)) {
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    expect(up.requests.length).toBe(before);

    for (const res of await allThree(globalAgent.id, bob.token)) expect(res.status).toBe(200);
    expect(up.requests.at(-1)?.headers['x-tenant-id']).toBe('tenant-b');

    for (const res of await allThree(agentOfA.id, admin.token)) expect(res.status).toBe(200);
    // A global admin acting on a tenant's agent acts within that tenant.
    expect(up.requests.at(-1)?.headers['x-tenant-id']).toBe('tenant-a');
    expect(up.requests.at(-1)?.headers['x-end-user-roles']).toBe('admin');
  });

  it("keeps a tenant-less user's agent private: tenant users and other tenant-less users get 404 and nothing goes upstream", async () => {
    const mallory = await signedInUser(h.deps, {
      email: 'mallory@example.com',
      roles: ['agent_creator'],
      tenantId: null,
    });
    const trudy = await signedInUser(h.deps, { email: 'trudy@example.com', roles: ['agent_creator'], tenantId: null });
    await h.vault.store({
      userId: alice.id,
      tenantId: 'tenant-a',
      serviceType: 'github',
      kind: 'api_key',
      secret: 'gh-alice',
      expiresAt: null,
    });
    // Stored as admin-api stores a tenant-less user's agent: in the owner's private scope.
    const trap = await insertAgent(h.deps, {
      upstreamUrl: up.url,
      tenantId: privateScope(mallory.id),
      requiredCredentials: [{ serviceType: 'github' }],
    });
    const before = up.requests.length;
    for (const victim of [alice, bob, trudy]) {
      for (const res of await allThree(trap.id, victim.token)) {
        expect(res.status).toBe(404);
        expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
      }
    }
    expect(up.requests.length).toBe(before);
    expect(
      (await h.app.request(`/api/v1/agents/${trap.id}`, { headers: { authorization: `Bearer ${mallory.token}` } }))
        .status,
    ).toBe(200);
    expect(
      (await h.app.request(`/api/v1/agents/${trap.id}`, { headers: { authorization: `Bearer ${admin.token}` } }))
        .status,
    ).toBe(200);
  });

  it('answers CREDENTIALS_REQUIRED with auth URLs from invoke and credentials-check, then ok once stored', async () => {
    const carol = await signedInUser(h.deps, {
      email: 'carol@example.com',
      roles: ['agent_creator'],
      tenantId: 'tenant-a',
    });
    await h.vault.store({
      userId: carol.id,
      tenantId: 'tenant-a',
      serviceType: 'github',
      kind: 'api_key',
      secret: 'gh-carol',
      expiresAt: null,
    });
    const agent = await insertAgent(h.deps, {
      upstreamUrl: up.url,
      tenantId: 'tenant-a',
      requiredCredentials: [{ serviceType: 'github' }, { serviceType: 'jira' }, { serviceType: 'slack' }],
    });
    const before = up.requests.length;

    const check = await get(`/api/v1/agents/${agent.id}/credentials-check`, carol.token);
    const invoked = await h.app.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(carol.token));
    for (const res of [check, invoked]) {
      expect(res.status).toBe(401);
      const body = (await res.json()) as { authUrls: Record<string, string> };
      expect(body).toEqual({
        code: 'CREDENTIALS_REQUIRED',
        message: expect.stringContaining('jira'),
        missing: ['jira', 'slack'],
        authUrls: { jira: expect.any(String), slack: expect.any(String) },
      });
      expect(new URL(body.authUrls.jira!).toString()).toContain('jira');
    }
    expect(up.requests.length).toBe(before);

    for (const serviceType of ['jira', 'slack']) {
      await h.vault.store({
        userId: carol.id,
        tenantId: 'tenant-a',
        serviceType,
        kind: 'api_key',
        secret: `${serviceType}-carol`,
        expiresAt: null,
      });
    }
    const ok = await get(`/api/v1/agents/${agent.id}/credentials-check`, carol.token);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true });
    const invokedNow = await h.app.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(carol.token));
    expect(invokedNow.status).toBe(200);
    expect(up.requests.at(-1)?.headers).toMatchObject({
      'x-credential-github': 'gh-carol',
      'x-credential-jira': 'jira-carol',
      'x-credential-slack': 'slack-carol',
    });
  });

  it('answers 403 AGENT_DISABLED on all three routes, also right after a cached read once agent.changed arrives', async () => {
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    for (const res of await allThree(agent.id, alice.token)) expect(res.status).toBe(200); // now cached

    // Another replica disables it: the row changes, then the event goes out on the bus.
    await h.deps.db.updateTable('agents').set({ is_active: false }).where('id', '=', agent.id).execute();
    const cached = await get(`/api/v1/agents/${agent.id}`, alice.token);
    expect(cached.status).toBe(200); // proves reads come from the cache until the event
    await h.deps.bus.publish('agent.changed', { agentId: agent.id, change: 'disabled' });

    const before = up.requests.length;
    for (const res of await allThree(agent.id, alice.token)) {
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'AGENT_DISABLED' });
    }
    expect(up.requests.length).toBe(before);

    await h.deps.db.updateTable('agents').set({ is_active: true }).where('id', '=', agent.id).execute();
    await h.deps.bus.publish('agent.changed', { agentId: agent.id, change: 'enabled' });
    for (const res of await allThree(agent.id, alice.token)) expect(res.status).toBe(200);
  });

  it('answers 403 for a disabled agent on first read too', async () => {
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a', isActive: false });
    for (const res of await allThree(agent.id, alice.token)) {
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'AGENT_DISABLED' });
    }
  });

  it('refuses the session token an upstream receives (403): it cannot invoke another agent or read agents as the user', async () => {
    const agent = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    const other = await insertAgent(h.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    expect((await h.app.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(alice.token))).status).toBe(200);
    const sessionToken = up.requests.at(-1)!.headers['x-gateway-session-token'] as string;
    const forwarded = up.requests.length;

    const asUpstream: Record<string, string>[] = [
      { 'x-gateway-session-token': sessionToken, 'x-agent-id': agent.id },
      { 'x-gateway-session-token': sessionToken, authorization: `Bearer ${agent.runtimeToken}` },
    ];
    for (const headers of asUpstream) {
      const invokeOther = await h.app.request(`/api/v1/agents/${other.id}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ message: 'hello' }),
      });
      const reads = await Promise.all([
        h.app.request(`/api/v1/agents/${other.id}`, { headers }),
        h.app.request(`/api/v1/agents/${agent.id}/credentials-check`, { headers }),
      ]);
      for (const res of [invokeOther, ...reads]) {
        expect(res.status).toBe(403);
        expect(await res.json()).toMatchObject({ code: 'SESSION_TOKEN_NOT_ALLOWED' });
      }
    }
    expect(up.requests).toHaveLength(forwarded);
  });
});
