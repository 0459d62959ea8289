import { openTestDatabase, testBackends } from '@agentgw/db/testing';
import type { DbHandle } from '@agentgw/db';
import { MemoryEventBus } from '@agentgw/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyOidcAdapter, UNCLAIMED_CLIENT_TTL } from './kysely-oidc-adapter.js';
import { sweepExpiredOAuthRows } from './oauth-row-sweeper.js';

describe.each(testBackends())('expired OAuth rows (%s)', (backend) => {
  let handle: DbHandle;
  const adapterDeps = () => ({
    db: handle.db,
    bus: new MemoryEventBus(),
    externalClient: async () => null,
    grantRevoked: () => {},
  });
  const rows = async () =>
    (await handle.db.selectFrom('oauth_models').select(['model', 'id', 'expires_at']).orderBy('id').execute()).map(
      (row) => ({ ...row, expires_at: row.expires_at === null ? null : new Date(row.expires_at) }),
    );

  beforeAll(async () => {
    handle = await openTestDatabase(backend);
  });
  afterAll(async () => handle?.close());

  it('keeps a registered client for a day only, until it obtains a grant', async () => {
    const clients = new KyselyOidcAdapter('Client', adapterDeps());
    const before = Date.now();
    await clients.upsert('client-unclaimed', { client_id: 'client-unclaimed' }, 0);
    await clients.upsert('client-claimed', { client_id: 'client-claimed' }, 0);
    await new KyselyOidcAdapter('Grant', adapterDeps()).upsert('grant-1', { clientId: 'client-claimed' }, 3600);
    const byId = new Map((await rows()).map((row) => [row.id, row]));
    expect(byId.get('client-claimed')?.expires_at).toBeNull();
    const unclaimed = byId.get('client-unclaimed')?.expires_at?.getTime();
    expect(unclaimed).toBeGreaterThanOrEqual(before + UNCLAIMED_CLIENT_TTL * 1000);
    expect(unclaimed).toBeLessThanOrEqual(Date.now() + UNCLAIMED_CLIENT_TTL * 1000);
    await handle.db.deleteFrom('oauth_models').execute();
  });

  it('deletes every row expired at the sweep, and nothing else', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const at = (offsetMs: number | null) => (offsetMs === null ? null : new Date(now.getTime() + offsetMs));
    const seeded: [string, string, number | null][] = [
      ['Client', 'unclaimed-expired', -1],
      ['Client', 'claimed', null],
      ['Interaction', 'interaction-expired', -60_000],
      ['RefreshToken', 'refresh-live', 60_000],
      ['AuthorizationCode', 'code-expired-now', 0],
      ['ExternalLogin', 'login-expired', -3_600_000],
    ];
    await handle.db
      .insertInto('oauth_models')
      .values(
        seeded.map(([model, id, offset]) => ({
          model,
          id,
          payload: JSON.stringify({}),
          grant_id: null,
          uid: null,
          account_id: null,
          expires_at: at(offset),
        })),
      )
      .execute();
    expect(await sweepExpiredOAuthRows(handle.db, now)).toBe(4);
    expect((await rows()).map((row) => row.id)).toEqual(['claimed', 'refresh-live']);
    expect(await sweepExpiredOAuthRows(handle.db, now)).toBe(0);
  });
});
