import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminApiService } from './service.js';
import { signedInUser, testClient, type Caller } from './admin-api.fixtures.js';

const base = '/api/v1/notifications/devices';

describe.each(testBackends())('devices API (%s)', (backend) => {
  let deps: TestDeps;
  let call: ReturnType<typeof testClient>;
  let alice: Caller;
  let bob: Caller;

  beforeAll(async () => {
    deps = await createTestDeps({ backend });
    call = testClient(await testHost(adminApiService, deps));
    alice = await signedInUser(deps, ['agent_creator'], 'acme');
    bob = await signedInUser(deps, []);
  });
  afterAll(() => deps?.close());

  const register = (caller: Caller, body: Record<string, unknown>) => call('POST', base, { token: caller.token, body });

  it('registers a device (201) and reactivates the same push token (200)', async () => {
    const first = await register(alice, { platform: 'ios', pushToken: 'apns-token-alice-0001', deviceName: 'Phone' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      success: true,
      device: {
        id: expect.any(String),
        platform: 'ios',
        deviceName: 'Phone',
        pushTokenPrefix: 'apns-tok',
        isActive: true,
        createdAt: expect.any(String),
      },
    });
    expect(JSON.stringify(first.body)).not.toContain('apns-token-alice-0001');

    await deps.db.updateTable('devices').set({ is_active: false }).where('id', '=', first.body.device.id).execute();
    const again = await register(alice, {
      platform: 'ios',
      pushToken: 'apns-token-alice-0001',
      deviceName: 'Renamed phone',
    });
    expect(again.status).toBe(200);
    expect(again.body.device).toMatchObject({ id: first.body.device.id, deviceName: 'Renamed phone', isActive: true });
  });

  it("lists only the caller's active devices", async () => {
    const mine = await register(alice, { platform: 'macos', pushToken: 'mac-token-alice', deviceName: 'Laptop' });
    const theirs = await register(bob, { platform: 'android', pushToken: 'fcm-token-bob', deviceName: 'Pixel' });
    const inactive = await register(alice, { platform: 'android', pushToken: 'old-token-alice', deviceName: 'Old' });
    await deps.db.updateTable('devices').set({ is_active: false }).where('id', '=', inactive.body.device.id).execute();

    const list = await call('GET', base, { token: alice.token });
    expect(list.status).toBe(200);
    const ids = list.body.devices.map((d: { id: string }) => d.id);
    expect(ids).toContain(mine.body.device.id);
    expect(ids).not.toContain(theirs.body.device.id);
    expect(ids).not.toContain(inactive.body.device.id);
    expect(JSON.stringify(list.body)).not.toContain('mac-token-alice');
  });

  it("refuses another user's active push token (409): their device stays active and theirs alone", async () => {
    const victims = await register(alice, {
      platform: 'android',
      pushToken: 'handed-over-token',
      deviceName: 'Tablet',
    });
    const taken = await register(bob, { platform: 'android', pushToken: 'handed-over-token', deviceName: 'Attacker' });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({
      code: 'PUSH_TOKEN_IN_USE',
      message: 'This push token is registered to another account; remove the device there first',
    });
    const list = await call('GET', base, { token: alice.token });
    expect(list.body.devices.find((d: { id: string }) => d.id === victims.body.device.id)).toMatchObject({
      isActive: true,
      deviceName: 'Tablet',
    });
    const holders = await deps.db
      .selectFrom('devices')
      .select(['user_id', 'is_active'])
      .where('push_token', '=', 'handed-over-token')
      .execute();
    expect(holders).toEqual([{ user_id: alice.id, is_active: true }]);

    // Once the owner removes it, the device may change hands.
    expect((await call('DELETE', `${base}/${victims.body.device.id}`, { token: alice.token })).status).toBe(200);
    expect(
      (await register(bob, { platform: 'android', pushToken: 'handed-over-token', deviceName: 'Tablet' })).status,
    ).toBe(201);
  });

  it("removes the caller's own device; another user's answers 404", async () => {
    const device = await register(alice, { platform: 'ios', pushToken: 'to-delete', deviceName: 'Spare' });
    expect((await call('DELETE', `${base}/${device.body.device.id}`, { token: bob.token })).status).toBe(404);
    const removed = await call('DELETE', `${base}/${device.body.device.id}`, { token: alice.token });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ success: true });
    expect((await call('DELETE', `${base}/${device.body.device.id}`, { token: alice.token })).status).toBe(404);
  });

  it('accepts an API key with X-User-Id and refuses a bare agent runtime token (no user)', async () => {
    const admin = await signedInUser(deps, ['admin']);
    const key = await call('POST', '/api/v1/admin/api-keys', { token: admin.token, body: { name: 'devices' } });
    const viaKey = await call('POST', base, {
      headers: { 'x-api-key': key.body.key, 'x-user-id': bob.id },
      body: { platform: 'ios', pushToken: 'via-key', deviceName: 'K' },
    });
    expect(viaKey.status).toBe(201);
    const list = await call('GET', base, { token: bob.token });
    expect(list.body.devices.map((d: { id: string }) => d.id)).toContain(viaKey.body.device.id);

    const agent = await call('POST', '/api/v1/admin/agents', {
      token: admin.token,
      body: { name: 'a', upstreamUrl: 'https://a.example.test' },
    });
    const runtime = await call('GET', base, { token: agent.body.runtime_token });
    expect(runtime.status).toBe(403);
  });

  it("refuses X-Agent-Id beside a user's own JWT (403 AGENT_ID_NOT_ALLOWED): only an API key or a session token may name an agent", async () => {
    const admin = await signedInUser(deps, ['admin']);
    const agent = await call('POST', '/api/v1/admin/agents', {
      token: admin.token,
      body: { name: 'global', upstreamUrl: 'https://g.example.test' },
    });
    const borrowed = await call('GET', base, { token: bob.token, headers: { 'x-agent-id': agent.body.agent.id } });
    expect(borrowed.status).toBe(403);
    expect(borrowed.body).toEqual({
      code: 'AGENT_ID_NOT_ALLOWED',
      message:
        'X-Agent-Id needs an API key (X-Api-Key) or a session token (X-Gateway-Session-Token); a user JWT alone cannot act as an agent',
    });
    expect((await call('GET', base, { token: bob.token })).status).toBe(200);
  });

  it.each([
    ['an unknown platform', { platform: 'windows', pushToken: 't', deviceName: 'd' }, 'platform'],
    ['a missing pushToken', { platform: 'ios', deviceName: 'd' }, 'pushToken'],
    ['a wrongly typed deviceName', { platform: 'ios', pushToken: 't', deviceName: 5 }, 'deviceName'],
  ])('answers 400 naming the field for %s', async (_label, body, field) => {
    const res = await register(alice, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });

  it('answers 400 for malformed JSON and 401 without credentials', async () => {
    expect((await call('POST', base, { token: alice.token, rawBody: '[' })).status).toBe(400);
    expect((await call('GET', base)).status).toBe(401);
  });
});
