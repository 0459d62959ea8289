import { createAuditTrail, MASK } from '@agentgw/audit';
import { ManualClock } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { authHeaders, createUser, tokenFor } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { auditWriterService } from './service.js';

type Entry = {
  id: string;
  userId: string;
  tenantId: string | null;
  toolName: string;
  status: string;
  arguments: unknown;
  result: unknown;
  createdAt: string;
};
type Page = { data: Entry[]; pagination: { limit: number; offset: number; total: number } };

describe.each(testBackends())('audit routes on %s', (backend) => {
  let deps: TestDeps;
  let host: TestHost;
  const tokens: Record<'admin' | 'tenantAdminA' | 'alice' | 'bob', string> = {
    admin: '',
    tenantAdminA: '',
    alice: '',
    bob: '',
  };
  const ids: Record<string, string> = {};
  const users: Record<string, string> = {};

  beforeAll(async () => {
    deps = await createTestDeps({ backend, env: { AUDIT_BATCH_SIZE: '20', AUDIT_BATCH_WAIT_MS: '10' } });
    host = await testHost(auditWriterService, deps);
    const admin = await createUser(deps, { email: 'admin@x.test', roles: ['admin'] });
    const tenantAdminA = await createUser(deps, { email: 'ta@a.test', roles: ['tenant_admin'], tenantId: 't-a' });
    const alice = await createUser(deps, { email: 'alice@a.test', roles: ['agent_creator'], tenantId: 't-a' });
    const bob = await createUser(deps, { email: 'bob@b.test', roles: ['agent_creator'], tenantId: 't-b' });
    Object.assign(users, { admin: admin.id, tenantAdminA: tenantAdminA.id, alice: alice.id, bob: bob.id });
    for (const [name, user] of Object.entries({ admin, tenantAdminA, alice, bob }))
      tokens[name as keyof typeof tokens] = await tokenFor(deps, user);

    const clock = new ManualClock();
    const trail = createAuditTrail({ queue: deps.queue, clock });
    const record = async (
      name: string,
      day: string,
      e: {
        user: string;
        agent: string;
        tenant: string;
        tool: string;
        status: 'pending' | 'confirmed' | 'rejected' | 'completed' | 'failed';
        duration?: number;
        args?: unknown;
      },
    ) => {
      clock.set(new Date(`${day}T10:00:00.000Z`));
      ids[name] = await trail.open({
        userId: e.user,
        agentId: e.agent,
        endUserId: null,
        providerId: 'p1',
        tenantId: e.tenant,
        toolName: e.tool,
        arguments: e.args ?? { n: name },
        status: 'pending',
      });
      if (e.status !== 'pending' || e.duration !== undefined)
        await trail.update(ids[name], { status: e.status, duration: e.duration ?? null });
    };
    await record('e1', '2026-01-01', {
      user: alice.id,
      agent: 'ag1',
      tenant: 't-a',
      tool: 'fs.read',
      status: 'completed',
      duration: 10,
    });
    await record('e2', '2026-01-02', {
      user: alice.id,
      agent: 'ag2',
      tenant: 't-a',
      tool: 'fs.write',
      status: 'failed',
      duration: 30,
    });
    await record('e3', '2026-01-03', { user: bob.id, agent: 'ag1', tenant: 't-b', tool: 'fs.read', status: 'pending' });
    await record('e4', '2026-01-04', {
      user: tenantAdminA.id,
      agent: 'ag3',
      tenant: 't-a',
      tool: 'db.query',
      status: 'rejected',
    });
    await record('e5', '2026-01-05', {
      user: bob.id,
      agent: 'ag3',
      tenant: 't-b',
      tool: 'fs.read',
      status: 'completed',
      duration: 20,
      args: { path: '/x', api_key: 'sk-live-1' },
    });
    await record('e6', '2026-01-06', {
      user: alice.id,
      agent: 'ag2',
      tenant: 't-a',
      tool: 'fs.read',
      status: 'confirmed',
    });
    for (let i = 0; i < 55; i++)
      await record(`bulk${i}`, '2026-02-01', {
        user: alice.id,
        agent: 'ag9',
        tenant: 't-a',
        tool: 'bulk.tool',
        status: 'pending',
      });
    // Written through the real queue consumer; wait until every create and update is in.
    await vi.waitFor(
      async () => {
        const n = await deps.db
          .selectFrom('audit_logs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('tool_name', 'is not', null)
          .executeTakeFirstOrThrow();
        expect(Number(n.n)).toBe(61);
        const e5 = await deps.db
          .selectFrom('audit_logs')
          .select('status')
          .where('id', '=', ids.e5!)
          .executeTakeFirstOrThrow();
        expect(e5.status).toBe('completed');
      },
      { timeout: 20_000, interval: 50 },
    );
  }, 180_000);
  afterAll(async () => {
    await host?.stop({ deadlineMs: 5000 });
    await deps?.close();
  });

  const get = async (who: keyof typeof tokens, path: string) =>
    host.request(path, { headers: authHeaders(tokens[who]) });
  const page = async (who: keyof typeof tokens, query = ''): Promise<Page> => {
    const res = await get(who, `/api/v1/audit/logs${query}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Page;
  };
  const names = (p: Page) => p.data.map((e) => Object.keys(ids).find((k) => ids[k] === e.id)).sort();

  it('pages newest first with the default limit and the exact total of the filtered set', async () => {
    const p = await page('admin');
    expect(p.pagination).toEqual({ limit: 50, offset: 0, total: 61 });
    expect(p.data).toHaveLength(50);
    const times = p.data.map((e) => e.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const last = await page('admin', '?limit=50&offset=50');
    expect(last.pagination).toEqual({ limit: 50, offset: 50, total: 61 });
    expect(last.data).toHaveLength(11);
    expect(names(await page('admin', '?tool_name=bulk.tool&limit=1&offset=54'))).toHaveLength(1);
    expect((await page('admin', '?tool_name=bulk.tool&limit=1')).pagination.total).toBe(55);
  });

  it('applies every filter for an admin', async () => {
    expect(names(await page('admin', `?user_id=${users.bob}`))).toEqual(['e3', 'e5']);
    expect(names(await page('admin', '?agent_id=ag1'))).toEqual(['e1', 'e3']);
    expect(names(await page('admin', '?tenant_id=t-b'))).toEqual(['e3', 'e5']);
    expect(names(await page('admin', '?tool_name=fs.read'))).toEqual(['e1', 'e3', 'e5', 'e6']);
    expect(names(await page('admin', '?status=completed'))).toEqual(['e1', 'e5']);
    expect(names(await page('admin', '?start_date=2026-01-02&end_date=2026-01-04'))).toEqual(['e2', 'e3', 'e4']);
    expect(names(await page('admin', '?start_date=2026-01-02T10:00:00Z&end_date=2026-01-04T10:00:00.000Z'))).toEqual([
      'e2',
      'e3',
      'e4',
    ]);
    expect(names(await page('admin', '?start_date=2026-01-02T10:00:00.001Z&end_date=2026-01-04T09:59:59Z'))).toEqual([
      'e3',
    ]);
    expect(names(await page('admin', '?end_date=2026-01-01T12:00:00%2B02:00'))).toEqual(['e1']);
    const combined = await page('admin', '?tenant_id=t-a&tool_name=fs.read&status=confirmed&agent_id=ag2');
    expect(names(combined)).toEqual(['e6']);
    expect(combined.pagination.total).toBe(1);
  });

  it.each([
    ['start_date=yesterday', 'start_date'],
    ['end_date=2026-02-30', 'end_date'],
    ['start_date=2026-01-05&end_date=2026-01-04', 'start_date'],
    ['status=exploded', 'status'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=100001', 'offset'],
    [`user_id=${'u'.repeat(201)}`, 'user_id'],
  ])('answers 400 naming the field for %s', async (query, field) => {
    const res = await get('admin', `/api/v1/audit/logs?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });

  it('shows an agent_creator only their own entries, whatever user_id they ask for', async () => {
    const own = await page('alice');
    expect(own.pagination.total).toBe(58);
    expect(new Set(own.data.map((e) => e.userId))).toEqual(new Set([users.alice]));
    expect((await page('alice', `?user_id=${users.bob}`)).pagination.total).toBe(58);
    expect(names(await page('bob'))).toEqual(['e3', 'e5']);
    expect(names(await page('bob', '?tenant_id=t-a'))).toEqual([]);
  });

  it('shows a tenant admin their tenant only, and honours user_id within it', async () => {
    expect((await page('tenantAdminA')).pagination.total).toBe(59);
    expect((await page('tenantAdminA', '?tenant_id=t-b')).pagination.total).toBe(59);
    expect(names(await page('tenantAdminA', `?user_id=${users.bob}`))).toEqual([]);
    expect(names(await page('tenantAdminA', `?user_id=${users.tenantAdminA}`))).toEqual(['e4']);
  });

  it('gets one entry under the same visibility, 404 otherwise', async () => {
    const ok = async (who: keyof typeof tokens, name: string) =>
      (await get(who, `/api/v1/audit/logs/${ids[name]}`)).status;
    expect(await ok('admin', 'e3')).toBe(200);
    expect(await ok('alice', 'e1')).toBe(200);
    expect(await ok('alice', 'e4')).toBe(404);
    expect(await ok('bob', 'e1')).toBe(404);
    expect(await ok('tenantAdminA', 'e1')).toBe(200);
    expect(await ok('tenantAdminA', 'e3')).toBe(404);
    const res = await get('admin', '/api/v1/audit/logs/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    const body = (await (await get('admin', `/api/v1/audit/logs/${ids.e1}`)).json()) as { data: Entry };
    expect(body.data).toMatchObject({
      id: ids.e1,
      toolName: 'fs.read',
      status: 'completed',
      tenantId: 't-a',
      duration: 10,
      arguments: { n: 'e1' },
    });
  });

  it('stored the arguments masked', async () => {
    const body = (await (await get('admin', `/api/v1/audit/logs/${ids.e5}`)).json()) as { data: Entry };
    expect(body.data.arguments).toEqual({ path: '/x', api_key: MASK });
  });

  it('gives stats to admins only, with the same filters', async () => {
    const all = await get('admin', '/api/v1/audit/stats');
    expect(all.status).toBe(200);
    expect(await all.json()).toEqual({
      data: {
        total: 61,
        byStatus: { pending: 56, confirmed: 1, rejected: 1, completed: 2, failed: 1 },
        avgDuration: 20,
      },
    });
    const b = await get('admin', '/api/v1/audit/stats?tenant_id=t-b');
    expect(await b.json()).toEqual({
      data: { total: 2, byStatus: { pending: 1, confirmed: 0, rejected: 0, completed: 1, failed: 0 }, avgDuration: 20 },
    });
    const none = await get('admin', '/api/v1/audit/stats?tool_name=missing');
    expect(await none.json()).toEqual({
      data: {
        total: 0,
        byStatus: { pending: 0, confirmed: 0, rejected: 0, completed: 0, failed: 0 },
        avgDuration: null,
      },
    });
    expect((await get('admin', '/api/v1/audit/stats?start_date=nope')).status).toBe(400);
    expect((await get('tenantAdminA', '/api/v1/audit/stats')).status).toBe(403);
    expect((await get('alice', '/api/v1/audit/stats')).status).toBe(403);
  });

  it('exports the filtered, visible set as NDJSON', async () => {
    const res = await get('admin', '/api/v1/audit/export?tenant_id=t-a');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Entry);
    expect(lines).toHaveLength(59);
    expect(new Set(lines.map((e) => e.tenantId))).toEqual(new Set(['t-a']));
    expect(new Set(lines.map((e) => e.id)).size).toBe(59);
    const bob = (await (await get('bob', '/api/v1/audit/export')).text()).trim().split('\n');
    expect(bob.map((l) => (JSON.parse(l) as Entry).id).sort()).toEqual([ids.e3, ids.e5].sort());
    expect((await get('admin', '/api/v1/audit/export?status=nope')).status).toBe(400);
  });

  it('refuses callers without a user JWT', async () => {
    for (const path of [
      '/api/v1/audit/logs',
      `/api/v1/audit/logs/${ids.e1}`,
      '/api/v1/audit/stats',
      '/api/v1/audit/export',
    ]) {
      const res = await host.request(path);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    }
  });
});
