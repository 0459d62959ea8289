import { AGENT_DISABLED_REASON } from '@agentgw/confirmations';
import type { GatewayEvents } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAgent, startHubUnderTest, type Caller, type HubFixture } from './hub.fixtures.js';

// Response bodies are whatever JSON the API answered; tests assert on their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe.each(testBackends())('confirmation routes on %s', (backend) => {
  let hub: HubFixture;
  beforeAll(async () => {
    hub = await startHubUnderTest({ backend });
  });
  afterAll(() => hub.close());

  async function call(
    method: string,
    path: string,
    who?: Caller,
    body?: unknown,
    raw?: string,
  ): Promise<{ status: number; body: Json }> {
    const headers: Record<string, string> = {};
    if (who) headers.authorization = `Bearer ${who.token}`;
    if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json';
    const res = await hub.host.request(`/api/v1/confirmation${path}`, {
      method,
      headers,
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  it('requires credentials', async () => {
    const res = await call('GET', '/list');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  });

  describe('visibility', () => {
    let id: string;
    beforeAll(async () => {
      ({ id } = await hub.hold());
    });

    it.each(['alice', 'bob', 'acmeAdmin', 'admin'] as const)('shows it to %s', async (who) => {
      const res = await call('GET', `/${id}`, hub[who]);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id,
        status: 'pending',
        tool: { name: 'delete_repo', arguments: { repo: 'acme/site' } },
        risk: { level: 'high' },
        userId: hub.bob.id,
        endUserId: hub.alice.id,
        tenantId: 'acme',
      });
      const list = await call('GET', '/list?status=pending', hub[who]);
      expect(list.body.data.map((c: Json) => c.id)).toContain(id);
      const pending = await call('GET', '/pending', hub[who]);
      expect(pending.body.data.map((c: Json) => c.id)).toContain(id);
    });

    it.each(['carol', 'globexAdmin'] as const)('hides it from %s: the same 404 as an unknown id', async (who) => {
      const unknown = await call('GET', '/no-such-confirmation', hub[who]);
      const res = await call('GET', `/${id}`, hub[who]);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(unknown.body);
      expect(JSON.stringify(res.body)).not.toContain(id);
      expect((await call('GET', '/list', hub[who])).body.data.map((c: Json) => c.id)).not.toContain(id);
      expect((await call('GET', '/pending', hub[who])).body.data.map((c: Json) => c.id)).not.toContain(id);
      for (const [path, body] of [
        [`/${id}/respond`, { confirmed: true }],
        [`/${id}/confirm`, undefined],
        [`/${id}/reject`, undefined],
      ] as const) {
        const answer = await call('POST', path, hub[who], body);
        expect(answer.status).toBe(404);
        expect(answer.body).toEqual(unknown.body);
      }
      expect((await call('GET', `/${id}`, hub.alice)).body.data.status).toBe('pending');
    });
  });

  it('lists with a status filter and paging', async () => {
    const first = await hub.hold();
    const second = await hub.hold();
    await call('POST', `/${second.id}/reject`, hub.alice);
    const rejected = await call('GET', '/list?status=rejected&limit=200', hub.alice);
    expect(rejected.status).toBe(200);
    expect(rejected.body.data.every((c: Json) => c.status === 'rejected')).toBe(true);
    expect(rejected.body.data.map((c: Json) => c.id)).toContain(second.id);
    expect(rejected.body.data.map((c: Json) => c.id)).not.toContain(first.id);
    const page = await call('GET', '/list?limit=1&offset=0', hub.alice);
    expect(page.body.data).toHaveLength(1);
    expect(page.body.pagination).toMatchObject({ limit: 1, offset: 0 });
    expect(page.body.pagination.total).toBeGreaterThanOrEqual(2);
    for (const status of ['confirmed', 'expired', 'consumed']) {
      expect((await call('GET', `/list?status=${status}`, hub.alice)).status).toBe(200);
    }
  });

  it.each([
    ['/list?status=done', 'status'],
    ['/list?limit=0', 'limit'],
    ['/list?limit=abc', 'limit'],
    ['/list?offset=-1', 'offset'],
  ])('refuses the bad query %s with 400 naming the field', async (path, field) => {
    const res = await call('GET', path, hub.alice);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });

  it('confirms through respond: the held call is released, the approval spent, and the answer carries no token', async () => {
    const { id, outcome } = await hub.hold();
    const res = await call('POST', `/${id}/respond`, hub.alice, { confirmed: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { id, status: 'confirmed', decidedBy: hub.alice.id } });
    expect(res.body.confirmation_token).toBeUndefined();
    expect(res.body.expiresIn).toBeUndefined();
    expect(await outcome).toEqual({ decision: 'confirmed', confirmationId: id, confirmedBy: hub.alice.id });
    expect((await call('GET', `/${id}`, hub.alice)).body.data.status).toBe('consumed');
    const again = await call('POST', `/${id}/respond`, hub.alice, { confirmed: false });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'CONFIRMATION_ALREADY_DECIDED', status: 'consumed' });
  });

  it('rejects through respond with a reason, and the shortcut reject without a body', async () => {
    const first = await hub.hold();
    const res = await call('POST', `/${first.id}/respond`, hub.bob, { confirmed: false, reason: 'wrong repo' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: { status: 'rejected', reason: 'wrong repo' } });
    expect(res.body.confirmation_token).toBeUndefined();
    expect(await first.outcome).toEqual({ decision: 'rejected', confirmationId: first.id, reason: 'wrong repo' });

    const second = await hub.hold();
    expect((await call('POST', `/${second.id}/reject`, hub.acmeAdmin)).status).toBe(200);
    expect((await second.outcome).decision).toBe('rejected');
  });

  it('confirms through the shortcut, by a tenant admin of the tenant and by an admin', async () => {
    for (const who of [hub.acmeAdmin, hub.admin]) {
      const { id, outcome } = await hub.hold();
      const res = await call('POST', `/${id}/confirm`, who, { reason: 'looks fine' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'confirmed', reason: 'looks fine' });
      expect(await outcome).toMatchObject({ decision: 'confirmed', confirmedBy: who.id });
    }
  });

  it.each([
    ['no body', undefined, undefined],
    ['confirmed missing', { reason: 'x' }, undefined],
    ['confirmed not a boolean', { confirmed: 'yes' }, undefined],
    ['an unknown field', { confirmed: true, admin: true }, undefined],
    ['an empty reason', { confirmed: false, reason: '' }, undefined],
    ['malformed JSON', undefined, '{"confirmed": tru'],
    ['a JSON array', [true], undefined],
  ])('refuses a respond with %s (400), leaving it pending', async (_what, body, raw) => {
    const { id } = await hub.hold();
    const res = await call('POST', `/${id}/respond`, hub.alice, body, raw);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((await call('GET', `/${id}`, hub.alice)).body.data.status).toBe('pending');
  });

  it('refuses a malformed body on the shortcuts', async () => {
    const { id } = await hub.hold();
    expect((await call('POST', `/${id}/reject`, hub.alice, undefined, '{oops')).status).toBe(400);
    expect((await call('POST', `/${id}/confirm`, hub.alice, { reason: 42 })).status).toBe(400);
    expect((await call('GET', `/${id}`, hub.alice)).body.data.status).toBe('pending');
  });

  it('keeps offering a confirmation whose caller went away; confirming it returns a token for that exact call, spent once', async () => {
    const client = new AbortController();
    const args = { repo: 'acme/gone' };
    const { id, outcome } = await hub.hold({ arguments: args }, client.signal);
    client.abort();
    expect((await outcome).decision).toBe('expired');
    expect((await call('GET', `/${id}`, hub.alice)).body.data).toMatchObject({
      status: 'pending',
      reason: 'The caller went away before a decision.',
    });
    expect((await call('GET', '/pending', hub.alice)).body.data.map((c: Json) => c.id)).toContain(id);
    const res = await call('POST', `/${id}/confirm`, hub.alice);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      data: { status: 'confirmed', reason: null },
      confirmation_token: expect.any(String),
      expiresIn: expect.any(Number),
    });
    const held = {
      auditId: 'a',
      agentId: hub.agentId,
      userId: hub.bob.id,
      endUserId: hub.alice.id,
      tenantId: 'acme',
      providerId: 'github',
      toolName: 'delete_repo',
      arguments: args,
      risk: 'high' as const,
    };
    expect(await hub.gate.redeem(res.body.confirmation_token, { ...held, arguments: { repo: 'acme/other' } })).toBe(
      false,
    );
    expect(await hub.gate.redeem(res.body.confirmation_token, held)).toBe(true);
    expect(await hub.gate.redeem(res.body.confirmation_token, held)).toBe(false);
    expect((await call('GET', `/${id}`, hub.alice)).body.data.status).toBe('consumed');
    expect((await call('GET', '/list?status=consumed', hub.alice)).body.data.map((c: Json) => c.id)).toContain(id);
  });

  it('masks secret-named arguments wherever a confirmation is shown and stored; the token still binds to the raw call', async () => {
    const raw = {
      repo: 'acme/masked',
      password: 'hunter2',
      nested: { apiKey: 'sk-live-123', list: [{ token: 'tok-9' }] },
    };
    const client = new AbortController();
    const { id, outcome } = await hub.hold({ arguments: raw }, client.signal);
    const masked = {
      repo: 'acme/masked',
      password: '********',
      nested: { apiKey: '********', list: [{ token: '********' }] },
    };
    const shown = [
      (await call('GET', `/${id}`, hub.alice)).body.data,
      (await call('GET', '/list', hub.alice)).body.data.find((c: Json) => c.id === id),
      (await call('GET', '/pending', hub.alice)).body.data.find((c: Json) => c.id === id),
      (
        (await (
          await hub.host.request('/api/v1/stream/pending', { headers: { authorization: `Bearer ${hub.alice.token}` } })
        ).json()) as Json
      ).data.find((c: Json) => c.id === id),
    ];
    for (const confirmation of shown) expect(confirmation.tool.arguments).toEqual(masked);
    const row = await hub.deps.db
      .selectFrom('confirmations')
      .select('arguments')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row.arguments)).not.toMatch(/hunter2|sk-live|tok-9/);

    client.abort();
    await outcome;
    const token = (await call('POST', `/${id}/confirm`, hub.alice)).body.confirmation_token;
    const held = {
      auditId: 'a',
      agentId: hub.agentId,
      userId: hub.bob.id,
      endUserId: hub.alice.id,
      tenantId: 'acme',
      providerId: 'github',
      toolName: 'delete_repo',
      risk: 'high' as const,
    };
    expect(await hub.gate.redeem(token, { ...held, arguments: masked })).toBe(false);
    expect(await hub.gate.redeem(token, { ...held, arguments: raw })).toBe(true);
  });

  describe('an agent disabled or deleted while its calls are held', () => {
    const pendingIds = async () => (await call('GET', '/pending', hub.alice)).body.data.map((c: Json) => c.id);

    it.each(['disabled', 'deleted'] as const)(
      '%s: its pending confirmations are rejected, the held calls end, the streams hear it; others stay',
      async (change) => {
        const agent = await insertAgent(hub.deps.db, { tenantId: 'acme', ownerId: hub.bob.id });
        const resolved: GatewayEvents['confirmation.resolved'][] = [];
        const unsubscribe = await hub.deps.bus.subscribe('confirmation.resolved', (e) => void resolved.push(e));
        const first = await hub.hold({ agentId: agent.id });
        const second = await hub.hold({ agentId: agent.id });
        const other = await hub.hold();
        if (change === 'disabled')
          await hub.deps.db.updateTable('agents').set({ is_active: false }).where('id', '=', agent.id).execute();
        else await hub.deps.db.deleteFrom('agents').where('id', '=', agent.id).execute();
        await hub.deps.bus.publish('agent.changed', { agentId: agent.id, change });

        for (const held of [first, second]) {
          expect(await held.outcome).toEqual({
            decision: 'rejected',
            confirmationId: held.id,
            reason: AGENT_DISABLED_REASON,
          });
          expect((await call('GET', `/${held.id}`, hub.alice)).body.data).toMatchObject({
            status: 'rejected',
            reason: AGENT_DISABLED_REASON,
            decidedBy: null,
          });
          expect((await call('POST', `/${held.id}/confirm`, hub.alice)).status).toBe(409);
        }
        expect(resolved.filter((e) => e.id === first.id || e.id === second.id)).toHaveLength(2);
        const pending = await pendingIds();
        expect(pending).toContain(other.id);
        expect(pending).not.toContain(first.id);
        await unsubscribe();
      },
    );

    it('an enabling or re-keying event leaves its confirmations pending', async () => {
      const held = await hub.hold();
      await hub.deps.bus.publish('agent.changed', { agentId: hub.agentId, change: 'token_rotated' });
      await new Promise((r) => setTimeout(r, 100));
      expect(await pendingIds()).toContain(held.id);
    });

    it("refuses an answer to a disabled agent's call even when the event never arrived (403 AGENT_DISABLED), and ends the call", async () => {
      const agent = await insertAgent(hub.deps.db, { tenantId: 'acme', ownerId: hub.bob.id });
      const held = await hub.hold({ agentId: agent.id });
      await hub.deps.db.updateTable('agents').set({ is_active: false }).where('id', '=', agent.id).execute();
      const res = await call('POST', `/${held.id}/respond`, hub.alice, { confirmed: true });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'AGENT_DISABLED' });
      expect(await held.outcome).toMatchObject({ decision: 'rejected', reason: AGENT_DISABLED_REASON });
      expect(res.body.confirmation_token).toBeUndefined();
    });
  });
});
