import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryEventBus, newId, systemClock } from '@agentgw/core';
import { openTestDatabase } from '@agentgw/db/testing';
import { ExternalIdentities } from './external-identities.js';
import { IdentityCache } from './identity-cache.js';
import type { UserTokenIdentity } from './jwt.js';

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (err: { status?: number; code?: string }) => `${err.status} ${err.code}`,
  );

describe('external identities', () => {
  let handle: Awaited<ReturnType<typeof openTestDatabase>>;
  let external: ExternalIdentities;
  const bus = new MemoryEventBus();
  const local = { id: newId(), email: 'eve@partner.example' };
  /** The codec's answer per token: the test names the identity a token carries. */
  const identities = new Map<string, UserTokenIdentity>();
  const identity = (over: Partial<UserTokenIdentity>): UserTokenIdentity => ({
    source: 'external',
    issuer: 'https://partner.example',
    sub: 'p-1',
    email: null,
    emailVerified: false,
    passwordStamp: 0,
    ...over,
  });

  beforeAll(async () => {
    handle = await openTestDatabase('pglite');
    await handle.db
      .insertInto('users')
      .values({
        id: local.id,
        email: local.email,
        roles: ['agent_creator'],
        tenant_id: 'P',
        password_hash: 'unused',
        name: null,
      })
      .execute();
    const users = new IdentityCache(handle.db, systemClock);
    const codec = { verifyUserToken: async (token: string) => identities.get(token)! };
    external = new ExternalIdentities({ db: handle.db, codec, users, clock: systemClock });
    await external.listen(bus);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('links by email only when the issuer says email_verified: true, then maps by subject', async () => {
    identities.set('unverified', identity({ sub: 'p-1', email: local.email, emailVerified: false }));
    expect(await external.userFromToken('unverified')).toMatchObject({
      id: 'external:https://partner.example:p-1',
      roles: [],
      tenantId: null,
    });

    identities.set('verified', identity({ sub: 'p-1', email: local.email, emailVerified: true }));
    expect((await external.userFromToken('verified')).id).toBe(local.id);
    identities.set('later', identity({ sub: 'p-1', email: 'changed@elsewhere.example' }));
    expect((await external.userFromToken('later')).id).toBe(local.id);
    expect(await handle.db.selectFrom('external_identities').select(['subject', 'user_id']).execute()).toEqual([
      { subject: 'p-1', user_id: local.id },
    ]);
  });

  it('never maps a subject that merely equals a local id, and refuses our own token for a missing user or an old password stamp', async () => {
    identities.set('sub-is-local-id', identity({ sub: local.id }));
    expect((await external.userFromToken('sub-is-local-id')).id).toBe(`external:https://partner.example:${local.id}`);
    identities.set('public-key', identity({ source: 'public_key', issuer: 'gateway', sub: local.id }));
    expect((await external.userFromToken('public-key')).id).toBe(local.id);

    identities.set('ours', identity({ source: 'gateway', issuer: 'gateway', sub: local.id, passwordStamp: 0 }));
    expect((await external.userFromToken('ours')).id).toBe(local.id);
    identities.set('ours-stale', identity({ source: 'gateway', issuer: 'gateway', sub: local.id, passwordStamp: 42 }));
    expect(await rejection(external.userFromToken('ours-stale'))).toBe('401 TOKEN_REVOKED');
    identities.set('ours-gone', identity({ source: 'gateway', issuer: 'gateway', sub: newId() }));
    expect(await rejection(external.userFromToken('ours-gone'))).toBe('401 UNAUTHORIZED');
  });
});
