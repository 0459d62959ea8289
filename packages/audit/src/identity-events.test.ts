import { openTestDatabase, testBackends } from '@agentgw/db/testing';
import type { DbHandle } from '@agentgw/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordIdentityEvent } from './identity-events.js';

describe.each(testBackends())('recordIdentityEvent (%s)', (backend) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDatabase(backend);
  });
  afterAll(async () => handle?.close());

  it('writes one row, its details masked as the audit log masks arguments', async () => {
    await recordIdentityEvent(handle.db, {
      type: 'token_exchange.refused',
      actorId: null,
      userId: 'user-1',
      tenantId: 'tenant-1',
      clientId: null,
      details: { providerId: 'p-1', reason: 'issuer not allowed', subjectToken: 'eyJ.secret.jwt' },
    });
    const rows = await handle.db.selectFrom('identity_events').selectAll().execute();
    expect(rows).toEqual([
      expect.objectContaining({
        type: 'token_exchange.refused',
        actor_id: null,
        user_id: 'user-1',
        tenant_id: 'tenant-1',
        client_id: null,
        details: { providerId: 'p-1', reason: 'issuer not allowed', subjectToken: '********' },
      }),
    ]);
    expect(rows[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(rows[0]!.created_at).toBeInstanceOf(Date);
  });
});
