import { testBackends } from '@agentgw/db/testing';
import { newId } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { createTestDeps } from './testing.js';

describe.each(testBackends())('createTestDeps (%s)', (backend) => {
  it('gives a migrated, isolated database and working auth, bus and queue', async () => {
    const first = await createTestDeps({ backend });
    const second = await createTestDeps({ backend });
    try {
      const id = newId();
      await first.db
        .insertInto('users')
        .values({ id, email: 'a@example.com', password_hash: 'x', name: null, tenant_id: null, roles: ['admin'] })
        .execute();
      expect(await first.db.selectFrom('users').select('email').execute()).toEqual([{ email: 'a@example.com' }]);
      expect(await second.db.selectFrom('users').select('email').execute()).toEqual([]);

      const token = await first.auth.signUserToken({ id, email: 'a@example.com', roles: ['admin'], tenantId: null });
      const principal = await first.auth.authenticate(new Headers({ authorization: `Bearer ${token}` }), 'jwt');
      expect(principal).toMatchObject({ via: 'jwt', userId: id, roles: ['admin'] });

      const seen: string[] = [];
      await first.bus.subscribe('user.changed', (p) => {
        seen.push(p.userId);
      });
      await first.bus.publish('user.changed', { userId: id });
      expect(seen).toEqual([id]);
      expect(first.config.NODE_ENV).toBe('test');
    } finally {
      await first.close();
      await second.close();
    }
  });
});
