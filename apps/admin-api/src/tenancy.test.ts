import { testBackends } from '@agentgw/db/testing';
import type { TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAdminApi, type Call, type Caller } from './test-client.js';

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
    body: () => ({ name: unique('provider'), pattern: `${unique('tools')}_*`, endpoint: 'https://mcp.example.test/mcp' }),
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
    body: (who) => ({ subjectType: 'user', subjectId: who.id, providerId: '*', action: 'allow', toolPattern: `${unique('tool')}*` }),
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
    ({ deps, call, admin, acmeAdmin: acme, globexAdmin: globex } = await openAdminApi(backend));
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
      expect([ofAcme.tenantId, ofGlobex.tenantId, global.tenantId, scopedByAdmin.tenantId]).toEqual(['acme', 'globex', null, 'globex']);

      const acmeSees = await listIds(acme);
      expect(acmeSees).toEqual(expect.arrayContaining([ofAcme.id, global.id]));
      expect(acmeSees).not.toContain(ofGlobex.id);
      expect(acmeSees).not.toContain(scopedByAdmin.id);

      const globexSees = await listIds(globex);
      expect(globexSees).toEqual(expect.arrayContaining([ofGlobex.id, scopedByAdmin.id, global.id]));
      expect(globexSees).not.toContain(ofAcme.id);

      expect(await listIds(admin)).toEqual(expect.arrayContaining([ofAcme.id, ofGlobex.id, global.id, scopedByAdmin.id]));

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
      expect((await call('PUT', `${resource.base}/${ofGlobex.id}`, { token: acme.token, body: resource.update })).status).toBe(404);
      expect((await call('DELETE', `${resource.base}/${ofGlobex.id}`, { token: acme.token })).status).toBe(404);
      expect((await call('PUT', `${resource.base}/${global.id}`, { token: acme.token, body: resource.update })).status).toBe(403);
      expect((await call('DELETE', `${resource.base}/${global.id}`, { token: acme.token })).status).toBe(403);
      expect((await call('GET', `${resource.base}/${ofGlobex.id}`, { token: globex.token })).status).toBe(200);
    });

    it('pins a tenant_admin to its own tenant: another tenantId in the body is 403', async () => {
      const res = await call('POST', resource.base, { token: acme.token, body: { ...resource.body(acme), tenantId: 'globex' } });
      expect(res.status).toBe(403);
      const same = await create(acme, { tenantId: 'acme' });
      expect(same.tenantId).toBe('acme');
    });
  });

  it('keeps API keys strictly per tenant (global keys are admin-only)', async () => {
    const createKey = async (who: Caller, body: Record<string, unknown> = {}) =>
      (await call('POST', '/api/v1/admin/api-keys', { token: who.token, body: { name: 'k', ...body } })).body.apiKey as { id: string; tenantId: string | null };
    const ofAcme = await createKey(acme);
    const ofGlobex = await createKey(globex);
    const global = await createKey(admin);
    const scoped = await createKey(admin, { tenantId: 'acme' });
    expect([ofAcme.tenantId, ofGlobex.tenantId, global.tenantId, scoped.tenantId]).toEqual(['acme', 'globex', null, 'acme']);
    const acmeKeys = (await call('GET', '/api/v1/admin/api-keys', { token: acme.token })).body.apiKeys.map((k: { id: string }) => k.id);
    expect(acmeKeys).toEqual(expect.arrayContaining([ofAcme.id, scoped.id]));
    expect(acmeKeys).not.toContain(ofGlobex.id);
    expect(acmeKeys).not.toContain(global.id);
    expect((await call('DELETE', `/api/v1/admin/api-keys/${ofGlobex.id}`, { token: acme.token })).status).toBe(404);
    const adminKeys = (await call('GET', '/api/v1/admin/api-keys', { token: admin.token })).body.apiKeys.map((k: { id: string }) => k.id);
    expect(adminKeys).toEqual(expect.arrayContaining([ofAcme.id, ofGlobex.id, global.id, scoped.id]));
  });
});
