import { generateApiKey } from '@agentgw/auth';
import { createUser, tokenFor } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAgent, startHubUnderTest, type HubFixture } from './hub.fixtures.js';

// An attacker's view of the hub: who may answer a held call, and how much a client may hold open.

let hub: HubFixture;
beforeAll(async () => {
  hub = await startHubUnderTest();
});
afterAll(() => hub?.close());

const answer = (id: string, headers: Record<string, string>) =>
  hub.host.request(`/api/v1/confirmation/${id}/confirm`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{}',
  });

describe('who may answer a held call', () => {
  it('not the agent (runtime token), not its session token, not an API key naming the very user the call is for; a person of another tenant or none sees a 404', async () => {
    const agent = await insertAgent(hub.deps.db, { tenantId: 'acme', ownerId: hub.bob.id });
    const { id, outcome } = await hub.hold({ agentId: agent.id });

    const key = generateApiKey();
    await hub.deps.db
      .insertInto('api_keys')
      .values({
        id: `k-${Date.now()}`,
        name: 'runtime',
        key_hash: key.hash,
        key_prefix: key.prefix,
        scopes: [],
        user_id: hub.acmeAdmin.id,
        tenant_id: 'acme',
      })
      .execute();
    const session = await hub.deps.auth.issueSessionToken({
      endUserId: hub.alice.id,
      email: 'alice@example.test',
      roles: [],
      tenantId: 'acme',
      agentId: agent.id,
      requestId: 'req_attack',
    });

    const credentials: Record<string, string>[] = [
      { authorization: `Bearer ${agent.runtimeToken}` },
      { 'x-gateway-session-token': session.token, 'x-agent-id': agent.id },
      { 'x-api-key': key.token, 'x-user-id': hub.alice.id },
      { 'x-api-key': key.token, 'x-user-id': hub.alice.id, 'x-agent-id': agent.id },
    ];
    for (const headers of credentials) {
      const res = await answer(id, headers);
      // 404 for a credential that sees no confirmations (a bare runtime token), 403 for the rest.
      expect([403, 404], JSON.stringify(Object.keys(headers))).toContain(res.status);
      expect(await res.json()).toMatchObject({ code: expect.any(String) });
    }
    const loner = await createUser(hub.deps, { email: `loner-${Date.now()}@example.test` });
    for (const token of [hub.globexAdmin.token, hub.carol.token, await tokenFor(hub.deps, loner)]) {
      const res = await answer(id, { authorization: `Bearer ${token}` });
      expect(res.status).toBe(404);
    }
    // Still pending: none of that decided it. The end user, signed in, does.
    const still = await hub.host.request(`/api/v1/confirmation/${id}`, {
      headers: { authorization: `Bearer ${hub.alice.token}` },
    });
    expect(await still.json()).toMatchObject({ data: { status: 'pending' } });
    const byAlice = await answer(id, { authorization: `Bearer ${hub.alice.token}` });
    expect(byAlice.status).toBe(200);
    expect(await outcome).toMatchObject({ decision: 'confirmed', confirmedBy: hub.alice.id });
  });

  it("a tenant runtime's API key acting as the end user (X-User-Id) is refused with AGENT_CANNOT_CONFIRM (403)", async () => {
    const { id } = await hub.hold();
    const key = generateApiKey();
    await hub.deps.db
      .insertInto('api_keys')
      .values({
        id: `k2-${Date.now()}`,
        name: 'own',
        key_hash: key.hash,
        key_prefix: key.prefix,
        scopes: [],
        user_id: hub.acmeAdmin.id,
        tenant_id: 'acme',
      })
      .execute();
    const res = await answer(id, { 'x-api-key': key.token, 'x-user-id': hub.alice.id });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'AGENT_CANNOT_CONFIRM' });
  });
});

describe('event streams per user', () => {
  it('caps the open streams one user holds (429 with the error body), and frees a slot when one closes', async () => {
    const open = () => hub.host.request('/api/v1/stream', { headers: { authorization: `Bearer ${hub.carol.token}` } });
    const streams: Response[] = [];
    for (let i = 0; i < 16; i++) {
      const res = await open();
      expect(res.status).toBe(200);
      streams.push(res);
    }
    const refused = await open();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
    // Another user is not affected.
    const other = await hub.host.request('/api/v1/stream', { headers: { authorization: `Bearer ${hub.bob.token}` } });
    expect(other.status).toBe(200);
    await other.body?.cancel();
    await streams.pop()!.body?.cancel();
    const again = await open();
    expect(again.status).toBe(200);
    for (const res of [...streams, again]) await res.body?.cancel();
  });
});
