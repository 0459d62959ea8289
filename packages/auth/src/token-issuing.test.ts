import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, systemClock } from '@agentgw/core';
import { openTestDatabase } from '@agentgw/db/testing';
import { createJwtCodec, PASSWORD_STAMP_CLAIM } from './jwt.js';
import { testConfig } from './auth.fixtures.js';
import { CONFIRMATION_TOKEN_LIFETIME_SECONDS, tokenIssuing, type TokenIssuing } from './token-issuing.js';

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (err: { status?: number; code?: string }) => `${err.status} ${err.code}`,
  );

describe('token issuing', () => {
  let handle: Awaited<ReturnType<typeof openTestDatabase>>;
  let tokens: TokenIssuing;
  const codec = createJwtCodec({ config: testConfig(), clock: systemClock });
  const user = { id: newId(), email: 'ann@a.io', roles: ['tenant_admin' as const], tenantId: 'A' };

  beforeAll(async () => {
    handle = await openTestDatabase('pglite');
    await handle.db
      .insertInto('users')
      .values({
        id: user.id,
        email: user.email,
        roles: user.roles,
        tenant_id: 'A',
        password_hash: 'unused',
        name: null,
      })
      .execute();
    tokens = tokenIssuing({ db: handle.db, codec, loginTokenLifetime: 3600 });
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('signs a login token with the password stamp read fresh from the database', async () => {
    expect((await codec.verify(await tokens.signUserToken(user), 'login'))[PASSWORD_STAMP_CLAIM]).toBe(0);
    const changedAt = new Date('2026-02-01T00:00:00Z');
    await handle.db.updateTable('users').set({ password_changed_at: changedAt }).where('id', '=', user.id).execute();
    expect((await codec.verify(await tokens.signUserToken(user), 'login'))[PASSWORD_STAMP_CLAIM]).toBe(
      changedAt.getTime(),
    );
    expect(tokens.loginTokenLifetime).toBe(3600);
  });

  it('checks each token for its own purpose: type, audience, presenting agent', async () => {
    const confirmation = await tokens.signConfirmationToken({ confirmationId: 'c-1', userId: user.id });
    expect(confirmation.expiresIn).toBe(CONFIRMATION_TOKEN_LIFETIME_SECONDS);
    expect(await tokens.verifyConfirmationToken(confirmation.token)).toEqual({
      confirmationId: 'c-1',
      userId: user.id,
    });
    expect(await rejection(tokens.verifyServiceToken(confirmation.token, 'vault'))).toBe('401 INVALID_TOKEN');

    const service = await tokens.signServiceToken('invoke-proxy', 'vault');
    expect(await tokens.verifyServiceToken(service, 'vault')).toEqual({ service: 'invoke-proxy' });
    expect(await rejection(tokens.verifyServiceToken(service, 'admin-api'))).toBe('401 INVALID_TOKEN');

    const session = await tokens.issueSessionToken({
      endUserId: user.id,
      email: user.email,
      roles: ['tenant_admin'],
      tenantId: 'A',
      agentId: 'agent-a',
      requestId: 'r',
    });
    expect(await tokens.verifySessionToken(session.token, { agentId: 'agent-a' })).toMatchObject({
      endUserId: user.id,
      roles: [],
      agentId: 'agent-a',
    });
    expect(await rejection(tokens.verifySessionToken(session.token, { agentId: 'agent-b' }))).toMatch(/^401 /);
  });
});
