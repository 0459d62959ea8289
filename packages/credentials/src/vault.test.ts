import { ManualClock } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser } from '@agentgw/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVault, SEALED_ROWS_TTL_MS } from './index.js';

describe.each(testBackends())('vault resolve with cached sealed rows (%s)', (backend) => {
  let deps: TestDeps;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = new ManualClock(Date.now());
    deps = await createTestDeps({ backend, clock });
  });
  afterEach(async () => {
    await deps.close();
  });

  const store = (vault: ReturnType<typeof createVault>, userId: string, serviceType: string, secret: string) =>
    vault.store({ userId, tenantId: null, serviceType, kind: 'api_key', secret, expiresAt: null });

  it('sees another vault’s store, replace and delete at once (credential.changed on the shared bus)', async () => {
    const user = await createUser(deps, { email: 'cache@example.test', roles: ['admin'] });
    const writer = createVault(deps);
    const reader = createVault(deps);
    const resolve = () =>
      reader.resolve({
        userId: user.id,
        tenantId: null,
        recipient: { kind: 'owner' },
        serviceTypes: ['github', 'gitlab'],
      });

    expect((await resolve()).missing).toEqual(['github', 'gitlab']);
    await store(writer, user.id, 'github', 'gh-1');
    expect(await resolve()).toMatchObject({ credentials: { github: 'gh-1' }, missing: ['gitlab'] });
    await store(writer, user.id, 'github', 'gh-2');
    await store(writer, user.id, 'gitlab', 'gl-1');
    expect(await resolve()).toMatchObject({ credentials: { github: 'gh-2', gitlab: 'gl-1' }, missing: [] });
    const [github] = (await writer.list(user.id)).filter((c) => c.serviceType === 'github');
    await writer.remove(user.id, github!.id);
    expect(await resolve()).toMatchObject({ credentials: { gitlab: 'gl-1' }, missing: ['github'] });
  });

  it('serves the cached sealed row until an event says otherwise', async () => {
    const user = await createUser(deps, { email: 'rows@example.test', roles: ['admin'] });
    const vault = createVault(deps);
    await store(vault, user.id, 'github', 'gh-secret');
    expect(
      (await vault.resolve({ userId: user.id, tenantId: null, recipient: { kind: 'owner' }, serviceTypes: ['github'] }))
        .credentials,
    ).toEqual({
      github: 'gh-secret',
    });
    // A write behind the vault's back (no event) is not seen: the rows are cached.
    await deps.db.deleteFrom('user_credentials').where('user_id', '=', user.id).execute();
    expect(
      (await vault.resolve({ userId: user.id, tenantId: null, recipient: { kind: 'owner' }, serviceTypes: ['github'] }))
        .credentials,
    ).toEqual({
      github: 'gh-secret',
    });
    // user.changed (e.g. the user was deleted) drops them.
    await deps.bus.publish('user.changed', { userId: user.id });
    expect(
      (await vault.resolve({ userId: user.id, tenantId: null, recipient: { kind: 'owner' }, serviceTypes: ['github'] }))
        .missing,
    ).toEqual(['github']);
  });

  it('re-reads the rows once the TTL has passed without an event', async () => {
    const user = await createUser(deps, { email: 'ttl@example.test', roles: ['admin'] });
    const vault = createVault(deps);
    await store(vault, user.id, 'github', 'gh-secret');
    await vault.resolve({ userId: user.id, tenantId: null, recipient: { kind: 'owner' }, serviceTypes: ['github'] });
    await deps.db.deleteFrom('user_credentials').where('user_id', '=', user.id).execute();
    clock.advance(SEALED_ROWS_TTL_MS + 1);
    expect(
      (await vault.resolve({ userId: user.id, tenantId: null, recipient: { kind: 'owner' }, serviceTypes: ['github'] }))
        .missing,
    ).toEqual(['github']);
  });

  it('opens expiry per resolve: a cached row past its expiry is missing', async () => {
    const user = await createUser(deps, { email: 'exp@example.test', roles: ['admin'] });
    const vault = createVault(deps);
    const soon = new Date(clock.now().getTime() + 10_000);
    await vault.store({
      userId: user.id,
      tenantId: null,
      serviceType: 'github',
      kind: 'jwt',
      secret: 'jwt-value',
      expiresAt: soon,
    });
    expect(
      (await vault.resolve({ userId: user.id, tenantId: null, recipient: { kind: 'owner' }, serviceTypes: ['github'] }))
        .credentials,
    ).toEqual({
      github: 'jwt-value',
    });
    clock.advance(11_000); // within the cache's TTL: the cached row's expiry is what makes it missing
    expect(
      (await vault.resolve({ userId: user.id, tenantId: null, recipient: { kind: 'owner' }, serviceTypes: ['github'] }))
        .missing,
    ).toEqual(['github']);
  });
});
