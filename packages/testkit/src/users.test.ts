import { verifyPassword } from '@agentgw/auth';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authHeaders, createUser, tokenFor } from './users.js';

describe.each(testBackends())('user helpers (%s)', (backend) => {
  let deps: TestDeps;
  beforeAll(async () => {
    deps = await createTestDeps({ backend });
  });
  afterAll(async () => {
    await deps.close();
  });

  it('inserts a user with a real password hash and signs a token that authenticates as them', async () => {
    const user = await createUser(deps, {
      email: 'Tenant.Admin@Example.com',
      roles: ['tenant_admin'],
      tenantId: 'acme',
    });
    const row = await deps.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ email: 'tenant.admin@example.com', roles: ['tenant_admin'], tenant_id: 'acme' });
    expect(await verifyPassword(user.password, row.password_hash)).toBe(true);

    const headers = authHeaders(await tokenFor(deps, user), { 'x-agent-id': 'a-1' });
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-agent-id']).toBe('a-1');
    const principal = await deps.auth.authenticate(new Headers(headers), 'jwt');
    expect(principal).toMatchObject({ via: 'jwt', userId: user.id, roles: ['tenant_admin'], tenantId: 'acme' });
  });
});
