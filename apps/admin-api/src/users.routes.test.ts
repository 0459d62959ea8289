import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminApiService } from './service.js';
import { signedInUser, testClient, type Caller } from './admin-api.fixtures.js';

describe.each(testBackends())('users API (%s)', (backend) => {
  let deps: TestDeps;
  let call: ReturnType<typeof testClient>;
  let admin: Caller;
  const events: unknown[] = [];

  beforeAll(async () => {
    deps = await createTestDeps({ backend });
    call = testClient(await testHost(adminApiService, deps));
    admin = await signedInUser(deps, ['admin']);
    await deps.bus.subscribe('user.changed', (e) => void events.push(e));
  });
  afterAll(() => deps?.close());

  const create = (body: Record<string, unknown>) => call('POST', '/api/v1/admin/users', { token: admin.token, body });

  it('creates a user with default roles, never returning the password or its hash', async () => {
    const res = await create({ email: 'Plain@Example.test', password: 'password-123', name: 'Plain' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      user: {
        id: expect.any(String),
        email: 'plain@example.test',
        name: 'Plain',
        roles: ['agent_creator'],
        tenantId: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    expect(JSON.stringify(res.body)).not.toMatch(/password/i);
    expect(events).toContainEqual({ userId: res.body.user.id });
  });

  it('creates a user with roles and a tenant; the new user can log in', async () => {
    const res = await create({
      email: 'ta@example.test',
      password: 'password-123',
      name: 'TA',
      roles: ['tenant_admin'],
      tenantId: 'acme',
    });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ roles: ['tenant_admin'], tenantId: 'acme' });
    const login = await call('POST', '/api/v1/auth/login', {
      body: { email: 'ta@example.test', password: 'password-123' },
    });
    expect(login.status).toBe(200);
    expect(login.body.user).toMatchObject({ roles: ['tenant_admin'], tenantId: 'acme' });
  });

  it('lists, gets, updates and deletes users', async () => {
    const created = (await create({ email: 'crud@example.test', password: 'password-123', name: 'Crud' })).body.user;

    const list = await call('GET', '/api/v1/admin/users', { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body.users.map((u: { id: string }) => u.id)).toContain(created.id);
    expect(JSON.stringify(list.body)).not.toMatch(/password/i);

    const got = await call('GET', `/api/v1/admin/users/${created.id}`, { token: admin.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ user: created });

    const updated = await call('PUT', `/api/v1/admin/users/${created.id}`, {
      token: admin.token,
      body: {
        name: 'Renamed',
        email: 'renamed@example.test',
        password: 'new-password-1',
        tenantId: 'globex',
        roles: ['tenant_admin', 'agent_creator'],
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      success: true,
      user: {
        id: created.id,
        name: 'Renamed',
        email: 'renamed@example.test',
        tenantId: 'globex',
        roles: ['tenant_admin', 'agent_creator'],
      },
    });
    const oldLogin = await call('POST', '/api/v1/auth/login', {
      body: { email: 'renamed@example.test', password: 'password-123' },
    });
    expect(oldLogin.status).toBe(401);
    const newLogin = await call('POST', '/api/v1/auth/login', {
      body: { email: 'renamed@example.test', password: 'new-password-1' },
    });
    expect(newLogin.status).toBe(200);

    const deleted = await call('DELETE', `/api/v1/admin/users/${created.id}`, { token: admin.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect(events).toContainEqual({ userId: created.id });
    expect((await call('GET', `/api/v1/admin/users/${created.id}`, { token: admin.token })).status).toBe(404);
    // The deleted user's token stops working at once.
    expect((await call('GET', '/api/v1/admin/agents', { token: newLogin.body.token })).status).toBe(401);
  });

  it('assigns and removes roles; a removal applies to a token issued before it', async () => {
    const user = await signedInUser(deps, ['agent_creator']);
    expect((await call('GET', '/api/v1/admin/agents', { token: user.token })).status).toBe(200);
    expect((await call('GET', '/api/v1/admin/api-keys', { token: user.token })).status).toBe(403);

    const added = await call('POST', `/api/v1/admin/users/${user.id}/roles`, {
      token: admin.token,
      body: { role: 'tenant_admin' },
    });
    expect(added.status).toBe(200);
    expect(added.body.user.roles).toEqual(['agent_creator', 'tenant_admin']);
    expect((await call('GET', '/api/v1/admin/api-keys', { token: user.token })).status).toBe(200);

    const again = await call('POST', `/api/v1/admin/users/${user.id}/roles`, {
      token: admin.token,
      body: { role: 'tenant_admin' },
    });
    expect(again.body.user.roles).toEqual(['agent_creator', 'tenant_admin']);

    events.length = 0;
    const removed = await call('DELETE', `/api/v1/admin/users/${user.id}/roles/agent_creator`, { token: admin.token });
    expect(removed.status).toBe(200);
    expect(removed.body.user.roles).toEqual(['tenant_admin']);
    expect(events).toEqual([{ userId: user.id }]);
    await call('DELETE', `/api/v1/admin/users/${user.id}/roles/tenant_admin`, { token: admin.token });
    expect((await call('GET', '/api/v1/admin/agents', { token: user.token })).status).toBe(403);
  });

  it('refuses an unknown role with 400', async () => {
    const user = await signedInUser(deps, ['agent_creator']);
    const assign = await call('POST', `/api/v1/admin/users/${user.id}/roles`, {
      token: admin.token,
      body: { role: 'superuser' },
    });
    expect(assign.status).toBe(400);
    expect(assign.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'role' });
    const remove = await call('DELETE', `/api/v1/admin/users/${user.id}/roles/superuser`, { token: admin.token });
    expect(remove.status).toBe(400);
    expect(remove.body).toMatchObject({ field: 'role' });
    const created = await create({ email: 'bad-role@example.test', password: 'password-123', roles: ['root'] });
    expect(created.status).toBe(400);
    expect(created.body.field).toMatch(/^roles/);
  });

  it('refuses a duplicate email on create and update with 409', async () => {
    await create({ email: 'dup@example.test', password: 'password-123' });
    expect((await create({ email: 'DUP@example.test', password: 'password-123' })).status).toBe(409);
    const other = (await create({ email: 'other@example.test', password: 'password-123' })).body.user;
    const res = await call('PUT', `/api/v1/admin/users/${other.id}`, {
      token: admin.token,
      body: { email: 'dup@example.test' },
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('EMAIL_TAKEN');
  });

  it('answers 400 naming the field for bad input', async () => {
    const missing = await create({ password: 'password-123' });
    expect(missing.status).toBe(400);
    expect(missing.body.field).toBe('email');
    const wrongType = await create({ email: 'typed@example.test', password: 'password-123', name: 42 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.field).toBe('name');
    const malformed = await call('POST', '/api/v1/admin/users', { token: admin.token, rawBody: '{not json' });
    expect(malformed.status).toBe(400);
  });

  it('answers 404 for an unknown id on every by-id route', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, body] of [
      ['GET', `/api/v1/admin/users/${id}`],
      ['PUT', `/api/v1/admin/users/${id}`, { name: 'x' }],
      ['DELETE', `/api/v1/admin/users/${id}`],
      ['POST', `/api/v1/admin/users/${id}/roles`, { role: 'admin' }],
      ['DELETE', `/api/v1/admin/users/${id}/roles/admin`],
    ] as const) {
      const res = await call(method, path, { token: admin.token, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });

  it('does not let an admin delete themselves or drop their own admin role (409)', async () => {
    const self = await call('DELETE', `/api/v1/admin/users/${admin.id}`, { token: admin.token });
    expect(self.status).toBe(409);
    const demote = await call('DELETE', `/api/v1/admin/users/${admin.id}/roles/admin`, { token: admin.token });
    expect(demote.status).toBe(409);
    const viaUpdate = await call('PUT', `/api/v1/admin/users/${admin.id}`, {
      token: admin.token,
      body: { roles: ['agent_creator'] },
    });
    expect(viaUpdate.status).toBe(409);
  });

  it('answers 401 without a token and 403 for non-admins', async () => {
    expect((await call('GET', '/api/v1/admin/users')).status).toBe(401);
    const tenantAdmin = await signedInUser(deps, ['tenant_admin'], 'acme');
    const res = await call('GET', '/api/v1/admin/users', { token: tenantAdmin.token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });
});
