import { hashToken } from '@agentgw/auth';
import { testBackends } from '@agentgw/db/testing';
import type { TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApiUnderTest, signedInUser, type Call, type Caller } from './admin-api.fixtures.js';

const base = '/api/v1/admin/api-keys';

describe.each(testBackends())('API keys API (%s)', (backend) => {
  let deps: TestDeps;
  let call: Call;
  let admin: Caller;
  let tenantAdmin: Caller;
  let member: Caller;
  const events: unknown[] = [];

  beforeAll(async () => {
    ({ deps, call, admin, acmeAdmin: tenantAdmin, acmeCreator: member } = await startAdminApiUnderTest(backend));
    await deps.bus.subscribe('apikey.changed', (e) => void events.push(e));
  });
  afterAll(() => deps?.close());

  it('creates a key with the default scope, returns it once and stores only its hash', async () => {
    const res = await call('POST', base, { token: admin.token, body: { name: 'runtime' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      apiKey: {
        id: expect.any(String),
        name: 'runtime',
        scopes: ['credentials:resolve'],
        keyPrefix: expect.any(String),
        tenantId: null,
        createdAt: expect.any(String),
        lastUsedAt: null,
      },
      key: expect.stringMatching(/^gk_[A-Za-z0-9_-]{43}$/),
    });
    expect(res.body.key.startsWith(res.body.apiKey.keyPrefix)).toBe(true);
    const row = await deps.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', res.body.apiKey.id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(hashToken(res.body.key));
    expect(row.user_id).toBe(admin.id);
    expect(events).toContainEqual({ keyId: res.body.apiKey.id });
  });

  it('lists keys by prefix only, never the key or its hash', async () => {
    const created = await call('POST', base, {
      token: admin.token,
      body: { name: 'listed', scopes: ['credentials:read', 'credentials:write'] },
    });
    const list = await call('GET', base, { token: admin.token });
    expect(list.status).toBe(200);
    const listed = list.body.apiKeys.find((k: { id: string }) => k.id === created.body.apiKey.id);
    expect(listed).toEqual(created.body.apiKey);
    expect(listed.scopes).toEqual(['credentials:read', 'credentials:write']);
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
    expect(JSON.stringify(list.body)).not.toMatch(/hash/i);
  });

  it('revokes a key: it fails at once on a flexible-auth endpoint', async () => {
    const created = await call('POST', base, { token: admin.token, body: { name: 'to revoke' } });
    const headers = { 'x-api-key': created.body.key, 'x-user-id': member.id };
    const before = await call('GET', '/api/v1/notifications/devices', { headers });
    expect(before.status).toBe(200);

    const revoked = await call('DELETE', `${base}/${created.body.apiKey.id}`, { token: admin.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ success: true });
    expect(events).toContainEqual({ keyId: created.body.apiKey.id });

    const after = await call('GET', '/api/v1/notifications/devices', { headers });
    expect(after.status).toBe(401);
    const list = await call('GET', base, { token: admin.token });
    expect(list.body.apiKeys.map((k: { id: string }) => k.id)).not.toContain(created.body.apiKey.id);
    expect((await call('DELETE', `${base}/${created.body.apiKey.id}`, { token: admin.token })).status).toBe(404);
  });

  it("pins a tenant_admin's keys to its tenant and hides other tenants' and global keys", async () => {
    const own = await call('POST', base, { token: tenantAdmin.token, body: { name: 'tenant key' } });
    expect(own.status).toBe(201);
    expect(own.body.apiKey.tenantId).toBe('acme');
    expect(
      (await call('POST', base, { token: tenantAdmin.token, body: { name: 'elsewhere', tenantId: 'globex' } })).status,
    ).toBe(403);

    const globex = await call('POST', base, { token: admin.token, body: { name: 'globex key', tenantId: 'globex' } });
    expect(globex.body.apiKey.tenantId).toBe('globex');
    const global = await call('POST', base, { token: admin.token, body: { name: 'global key' } });

    const list = await call('GET', base, { token: tenantAdmin.token });
    const ids = list.body.apiKeys.map((k: { id: string }) => k.id);
    expect(ids).toContain(own.body.apiKey.id);
    expect(ids).not.toContain(globex.body.apiKey.id);
    expect(ids).not.toContain(global.body.apiKey.id);
    expect((await call('DELETE', `${base}/${globex.body.apiKey.id}`, { token: tenantAdmin.token })).status).toBe(404);
    expect((await call('DELETE', `${base}/${global.body.apiKey.id}`, { token: tenantAdmin.token })).status).toBe(404);

    const adminList = await call('GET', base, { token: admin.token });
    expect(adminList.body.apiKeys.map((k: { id: string }) => k.id)).toEqual(
      expect.arrayContaining([own.body.apiKey.id, globex.body.apiKey.id]),
    );
  });

  it("refuses a key to a tenant_admin without a tenant: global keys are an admin's", async () => {
    const homeless = await signedInUser(deps, ['tenant_admin']);
    for (const body of [{ name: 'x' }, { name: 'x', tenantId: null }]) {
      const res = await call('POST', base, { token: homeless.token, body });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'TENANT_FORBIDDEN' });
    }
    expect(await deps.db.selectFrom('api_keys').select('id').where('user_id', '=', homeless.id).execute()).toEqual([]);
  });

  it("refuses a tenant_admin's key acting for a more privileged user of its tenant", async () => {
    const created = await call('POST', base, { token: tenantAdmin.token, body: { name: 'impersonation' } });
    const acmeRoot = await signedInUser(deps, ['admin'], 'acme');
    const as = (userId: string) =>
      call('GET', '/api/v1/notifications/devices', { headers: { 'x-api-key': created.body.key, 'x-user-id': userId } });
    expect((await as(member.id)).status).toBe(200);
    const refused = await as(acmeRoot.id);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'KEY_CANNOT_ACT_FOR_USER' });
  });

  it.each([
    ['an unknown scope', { name: 'x', scopes: ['credentials:everything'] }, 'scopes.0'],
    ['an empty scope list', { name: 'x', scopes: [] }, 'scopes'],
    ['a missing name', { scopes: ['credentials:read'] }, 'name'],
    ['a wrongly typed name', { name: 7 }, 'name'],
  ])('answers 400 naming the field for %s', async (_label, body, field) => {
    const res = await call('POST', base, { token: admin.token, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });

  it('answers 401 without a token, 403 without apikey:manage, 404 for an unknown id', async () => {
    expect((await call('GET', base)).status).toBe(401);
    expect((await call('GET', base, { token: member.token })).status).toBe(403);
    expect((await call('POST', base, { token: member.token, body: { name: 'x' } })).status).toBe(403);
    expect((await call('DELETE', `${base}/00000000-0000-4000-8000-000000000000`, { token: admin.token })).status).toBe(
      404,
    );
  });
});
