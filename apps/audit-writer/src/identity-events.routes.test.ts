import { recordIdentityEvent } from '@agentgw/audit';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { authHeaders, createUser, tokenFor } from '@agentgw/testkit';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditWriterService } from './service.js';

type Event = { id: string; type: string; userId: string | null; tenantId: string | null; details: unknown };
type Page = { data: Event[]; next: string | null };

// The audit service as the router reaches it (the all-in-one mounts the same service).
describe.each(testBackends())('GET /api/v1/audit/identity-events on %s', (backend) => {
  let deps: TestDeps;
  let host: TestHost;
  const tokens: Record<'admin' | 'tenantAdmin1' | 'tenantAdmin2' | 'member1', string> = {
    admin: '',
    tenantAdmin1: '',
    tenantAdmin2: '',
    member1: '',
  };
  const users: Record<'alice' | 'bob', string> = { alice: '', bob: '' };
  /** Events written at one (past) instant: a page boundary falls between equal times. */
  const SAME_INSTANT = new Date('2026-03-01T12:00:00.123Z');

  beforeAll(async () => {
    deps = await createTestDeps({ backend });
    host = await testHost(auditWriterService, deps);
    const made = {
      admin: await createUser(deps, { email: 'admin@ie.test', roles: ['admin'] }),
      tenantAdmin1: await createUser(deps, { email: 'ta@t1.test', roles: ['tenant_admin'], tenantId: 't1' }),
      tenantAdmin2: await createUser(deps, { email: 'ta@t2.test', roles: ['tenant_admin'], tenantId: 't2' }),
      member1: await createUser(deps, { email: 'member@t1.test', roles: ['agent_creator'], tenantId: 't1' }),
    };
    for (const [name, user] of Object.entries(made)) tokens[name as keyof typeof tokens] = await tokenFor(deps, user);
    users.alice = (await createUser(deps, { email: 'alice@t1.test', tenantId: 't1' })).id;
    users.bob = (await createUser(deps, { email: 'bob@t1.test', tenantId: 't1' })).id;

    const t1 = { actorId: null, tenantId: 't1', clientId: 'client-1' };
    await recordIdentityEvent(deps.db, {
      ...t1,
      type: 'oauth.client_registered',
      userId: null,
      tenantId: null,
      details: {},
    });
    await recordIdentityEvent(deps.db, {
      ...t1,
      type: 'oauth.consent_given',
      actorId: users.alice,
      userId: users.alice,
      details: { resource: 'https://gw.test/mcp', scopes: ['mcp'] },
    });
    await recordIdentityEvent(deps.db, {
      ...t1,
      type: 'token_exchange.refused',
      userId: users.bob,
      details: { by: 'gateway', providerId: 'p1', reason: 'TOKEN_EXCHANGE_REFUSED', access_token: 'at-secret-1' },
    });
    await deps.db
      .insertInto('identity_events')
      .values(
        Array.from({ length: 7 }, (_, i) => ({
          id: randomUUID(),
          type: 'connected_account.refreshed',
          actor_id: null,
          user_id: users.alice,
          tenant_id: 't1',
          client_id: null,
          details: JSON.stringify({ n: i }),
          created_at: SAME_INSTANT,
        })),
      )
      .execute();
  }, 120_000);
  afterAll(async () => {
    await host?.stop({ deadlineMs: 5000 });
    await deps?.close();
  });

  const get = (who: keyof typeof tokens, query = '') =>
    host.request(`/api/v1/audit/identity-events${query}`, { headers: authHeaders(tokens[who]) });
  const page = async (who: keyof typeof tokens, query = ''): Promise<Page> => {
    const res = await get(who, query);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as Page;
  };
  const types = (p: Page) => p.data.map((e) => e.type);

  it('shows an admin every event, newest first, with what each says (a secret-named detail masked)', async () => {
    const all = await page('admin');
    expect(all.data).toHaveLength(10);
    expect(all.next).toBeNull();
    expect(types(all).slice(0, 3)).toEqual([
      'token_exchange.refused',
      'oauth.consent_given',
      'oauth.client_registered',
    ]);
    const refused = all.data.find((e) => e.type === 'token_exchange.refused');
    expect(refused).toMatchObject({ userId: users.bob, tenantId: 't1', details: { providerId: 'p1' } });
    expect(JSON.stringify(all)).not.toContain('at-secret-1');
  });

  it('filters by type, user and time', async () => {
    expect(types(await page('admin', '?type=token_exchange.refused'))).toEqual(['token_exchange.refused']);
    expect((await page('admin', `?user_id=${users.bob}`)).data.map((e) => e.userId)).toEqual([users.bob]);
    expect((await page('admin', '?since=2026-03-01T12:00:00.123Z&until=2026-03-01T12:00:00.124Z')).data).toHaveLength(
      7,
    );
    expect((await page('admin', '?until=2026-03-01T12:00:00.123Z')).data).toHaveLength(0);
  });

  it('walks every page by its cursor, each event once, across events of the same instant', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const p: Page = await page('admin', `?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(p.data.length).toBeLessThanOrEqual(3);
      seen.push(...p.data.map((e) => e.id));
      cursor = p.next;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(4);
    expect(new Set(seen).size).toBe(10);
    expect(seen).toEqual((await page('admin')).data.map((e) => e.id));
  });

  it("shows a tenant admin their tenant's events only: T2's admin sees none of T1's, T1's admin not the platform's", async () => {
    expect((await page('tenantAdmin2')).data).toEqual([]);
    expect((await page('tenantAdmin2', `?user_id=${users.alice}`)).data).toEqual([]);
    const t1 = await page('tenantAdmin1');
    expect(t1.data).toHaveLength(9);
    expect(new Set(t1.data.map((e) => e.tenantId))).toEqual(new Set(['t1']));
  });

  it('refuses anyone else (403) and an anonymous caller (401)', async () => {
    expect((await get('member1')).status).toBe(403);
    expect((await host.request('/api/v1/audit/identity-events')).status).toBe(401);
  });

  it.each([
    ['type=oauth.everything', 'type'],
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['since=yesterday', 'since'],
    ['since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z', 'since'],
    ['cursor=not-a-cursor', 'cursor'],
    [`cursor=${Buffer.from(JSON.stringify(["2026-01-01'; drop table x", 'a'])).toString('base64url')}`, 'cursor'],
    [`user_id=${'u'.repeat(201)}`, 'user_id'],
  ])('answers 400 naming the field for %s', async (query, field) => {
    const res = await get('admin', `?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });
});
