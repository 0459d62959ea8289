import { testBackends } from '@agentgw/db/testing';
import type { TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApiUnderTest, signedInUser, type Call, type Caller } from './admin-api.fixtures.js';

let serial = 0;
const unique = (prefix: string) => `${prefix}_${++serial}`;

interface Resource {
  name: string;
  base: string;
  /** Key of the list in list responses and of the item in get/create responses. */
  plural: string;
  singular: string;
  body: (who: Caller) => Record<string, unknown>;
  update: Record<string, unknown>;
}

/** Every tenant-scoped resource of the admin API. */
const RESOURCES: Resource[] = [
  {
    name: 'agents',
    base: '/api/v1/admin/agents',
    plural: 'agents',
    singular: 'agent',
    body: () => ({ name: unique('agent'), upstreamUrl: 'https://runtime.example.test' }),
    update: { name: 'renamed' },
  },
  {
    name: 'tool providers',
    base: '/api/v1/admin/tool-providers',
    plural: 'providers',
    singular: 'provider',
    body: () => ({
      name: unique('provider'),
      pattern: `${unique('tools')}_*`,
      endpoint: 'https://mcp.example.test/mcp',
    }),
    update: { name: 'renamed' },
  },
  {
    name: 'credential providers',
    base: '/api/v1/credential-providers',
    plural: 'providers',
    singular: 'provider',
    body: () => ({ name: 'Service', serviceType: unique('service'), authType: 'api_key' }),
    update: { name: 'renamed' },
  },
  {
    name: 'access rules',
    base: '/api/v1/admin/provider-access',
    plural: 'rules',
    singular: 'rule',
    body: (who) => ({
      subjectType: 'user',
      subjectId: who.id,
      providerId: '*',
      action: 'allow',
      toolPattern: `${unique('tool')}*`,
    }),
    update: { action: 'deny' },
  },
];

describe.each(testBackends())('tenancy (%s)', (backend) => {
  let deps: TestDeps;
  let call: Call;
  let admin: Caller;
  let acme: Caller;
  let globex: Caller;

  beforeAll(async () => {
    ({ deps, call, admin, acmeAdmin: acme, globexAdmin: globex } = await startAdminApiUnderTest(backend));
  });
  afterAll(() => deps?.close());

  describe.each(RESOURCES)('$name', (resource) => {
    const create = async (who: Caller, extra: Record<string, unknown> = {}) => {
      const res = await call('POST', resource.base, { token: who.token, body: { ...resource.body(who), ...extra } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      // Read back as admin: agent create answers the spec's fixed shape, which has no tenantId.
      const stored = await call('GET', `${resource.base}/${res.body[resource.singular].id}`, { token: admin.token });
      return stored.body[resource.singular] as { id: string; tenantId: string | null };
    };
    const listIds = async (who: Caller) => {
      const res = await call('GET', resource.base, { token: who.token });
      expect(res.status).toBe(200);
      return res.body[resource.plural].map((item: { id: string }) => item.id) as string[];
    };

    it('shows each tenant its own and the global items, never the other tenant’s', async () => {
      const ofAcme = await create(acme);
      const ofGlobex = await create(globex);
      const global = await create(admin);
      const scopedByAdmin = await create(admin, { tenantId: 'globex' });
      expect([ofAcme.tenantId, ofGlobex.tenantId, global.tenantId, scopedByAdmin.tenantId]).toEqual([
        'acme',
        'globex',
        null,
        'globex',
      ]);

      const acmeSees = await listIds(acme);
      expect(acmeSees).toEqual(expect.arrayContaining([ofAcme.id, global.id]));
      expect(acmeSees).not.toContain(ofGlobex.id);
      expect(acmeSees).not.toContain(scopedByAdmin.id);

      const globexSees = await listIds(globex);
      expect(globexSees).toEqual(expect.arrayContaining([ofGlobex.id, scopedByAdmin.id, global.id]));
      expect(globexSees).not.toContain(ofAcme.id);

      expect(await listIds(admin)).toEqual(
        expect.arrayContaining([ofAcme.id, ofGlobex.id, global.id, scopedByAdmin.id]),
      );

      for (const [who, id, status] of [
        [acme, ofAcme.id, 200],
        [acme, global.id, 200],
        [acme, ofGlobex.id, 404],
        [acme, scopedByAdmin.id, 404],
        [globex, ofAcme.id, 404],
        [admin, ofGlobex.id, 200],
      ] as const) {
        const res = await call('GET', `${resource.base}/${id}`, { token: who.token });
        expect(res.status, `${who.email} GET ${id}`).toBe(status);
        if (status === 200) expect(res.body[resource.singular].id).toBe(id);
      }
    });

    it('answers 404 when changing another tenant’s item and 403 when changing a global one', async () => {
      const ofGlobex = await create(globex);
      const global = await create(admin);
      expect(
        (await call('PUT', `${resource.base}/${ofGlobex.id}`, { token: acme.token, body: resource.update })).status,
      ).toBe(404);
      expect((await call('DELETE', `${resource.base}/${ofGlobex.id}`, { token: acme.token })).status).toBe(404);
      expect(
        (await call('PUT', `${resource.base}/${global.id}`, { token: acme.token, body: resource.update })).status,
      ).toBe(403);
      expect((await call('DELETE', `${resource.base}/${global.id}`, { token: acme.token })).status).toBe(403);
      expect((await call('GET', `${resource.base}/${ofGlobex.id}`, { token: globex.token })).status).toBe(200);
    });

    it('keeps what a tenant_admin without a tenant creates private to them (and admins), never global', async () => {
      const loner = await signedInUser(deps, ['tenant_admin']);
      const otherLoner = await signedInUser(deps, ['tenant_admin']);
      const own = await create(loner);
      const askedGlobal = await create(loner, { tenantId: null });
      expect([own.tenantId, askedGlobal.tenantId]).toEqual([`private:${loner.id}`, `private:${loner.id}`]);
      expect(await listIds(loner)).toEqual(expect.arrayContaining([own.id]));
      for (const who of [acme, otherLoner]) {
        expect(await listIds(who)).not.toContain(own.id);
        expect((await call('GET', `${resource.base}/${own.id}`, { token: who.token })).status).toBe(404);
        expect(
          (await call('PUT', `${resource.base}/${own.id}`, { token: who.token, body: resource.update })).status,
        ).toBe(404);
      }
      expect(
        (await call('PUT', `${resource.base}/${own.id}`, { token: loner.token, body: resource.update })).status,
      ).toBe(200);
      expect((await call('GET', `${resource.base}/${own.id}`, { token: admin.token })).status).toBe(200);
      const global = await create(admin);
      expect(global.tenantId).toBeNull();
      expect(
        (await call('PUT', `${resource.base}/${global.id}`, { token: loner.token, body: resource.update })).status,
      ).toBe(403);
      expect(
        (await call('POST', resource.base, { token: loner.token, body: { ...resource.body(loner), tenantId: 'acme' } }))
          .status,
      ).toBe(403);
    });

    it('pins a tenant_admin to its own tenant: another tenantId in the body is 403', async () => {
      const res = await call('POST', resource.base, {
        token: acme.token,
        body: { ...resource.body(acme), tenantId: 'globex' },
      });
      expect(res.status).toBe(403);
      const same = await create(acme, { tenantId: 'acme' });
      expect(same.tenantId).toBe('acme');
    });
  });

  it('keeps API keys strictly per tenant (global keys are admin-only)', async () => {
    const createKey = async (who: Caller, body: Record<string, unknown> = {}) =>
      (await call('POST', '/api/v1/admin/api-keys', { token: who.token, body: { name: 'k', ...body } })).body
        .apiKey as { id: string; tenantId: string | null };
    const ofAcme = await createKey(acme);
    const ofGlobex = await createKey(globex);
    const global = await createKey(admin);
    const scoped = await createKey(admin, { tenantId: 'acme' });
    expect([ofAcme.tenantId, ofGlobex.tenantId, global.tenantId, scoped.tenantId]).toEqual([
      'acme',
      'globex',
      null,
      'acme',
    ]);
    const acmeKeys = (await call('GET', '/api/v1/admin/api-keys', { token: acme.token })).body.apiKeys.map(
      (k: { id: string }) => k.id,
    );
    expect(acmeKeys).toEqual(expect.arrayContaining([ofAcme.id, scoped.id]));
    expect(acmeKeys).not.toContain(ofGlobex.id);
    expect(acmeKeys).not.toContain(global.id);
    expect((await call('DELETE', `/api/v1/admin/api-keys/${ofGlobex.id}`, { token: acme.token })).status).toBe(404);
    const adminKeys = (await call('GET', '/api/v1/admin/api-keys', { token: admin.token })).body.apiKeys.map(
      (k: { id: string }) => k.id,
    );
    expect(adminKeys).toEqual(expect.arrayContaining([ofAcme.id, ofGlobex.id, global.id, scoped.id]));
  });

  it('gives a tenant_admin without a tenant no hold on global API keys', async () => {
    const loner = await signedInUser(deps, ['tenant_admin']);
    const global = (
      await call('POST', '/api/v1/admin/api-keys', { token: admin.token, body: { name: 'admin-global' } })
    ).body.apiKey as { id: string; tenantId: null };
    expect(global.tenantId).toBeNull();
    const listed = await call('GET', '/api/v1/admin/api-keys', { token: loner.token });
    expect(listed.status).toBe(200);
    expect(listed.body.apiKeys).toEqual([]);
    expect((await call('DELETE', `/api/v1/admin/api-keys/${global.id}`, { token: loner.token })).status).toBe(404);
    expect((await call('POST', '/api/v1/admin/api-keys', { token: loner.token, body: { name: 'mine' } })).status).toBe(
      403,
    );
    const stillThere = (await call('GET', '/api/v1/admin/api-keys', { token: admin.token })).body.apiKeys.map(
      (k: { id: string }) => k.id,
    );
    expect(stillThere).toContain(global.id);
  });

  it("keeps a self-registered user's agent private: other tenant-less users and tenant users get 404", async () => {
    const register = async (email: string) => {
      const res = await call('POST', '/api/v1/auth/register', {
        body: { email, password: 'correct horse battery staple', name: 'Self' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const login = await call('POST', '/api/v1/auth/login', {
        body: { email, password: 'correct horse battery staple' },
      });
      return login.body.token as string;
    };
    const mallory = await register(`mallory-${Date.now()}@example.test`);
    const trudy = await register(`trudy-${Date.now()}@example.test`);
    const created = await call('POST', '/api/v1/admin/agents', {
      token: mallory,
      body: { name: 'trap', upstreamUrl: 'https://attacker.example.test' },
    });
    expect(created.status).toBe(201);
    const id = created.body.agent.id as string;
    const mine = await call('GET', `/api/v1/admin/agents/${id}`, { token: mallory });
    expect(mine.status).toBe(200);
    expect(mine.body.agent.tenantId).toMatch(/^private:/);
    for (const token of [trudy, acme.token, globex.token]) {
      expect((await call('GET', `/api/v1/admin/agents/${id}`, { token })).status).toBe(404);
      const listed = await call('GET', '/api/v1/admin/agents', { token });
      expect(listed.body.agents.map((a: { id: string }) => a.id)).not.toContain(id);
    }
    expect((await call('GET', `/api/v1/admin/agents/${id}`, { token: admin.token })).status).toBe(200);
  });
});
