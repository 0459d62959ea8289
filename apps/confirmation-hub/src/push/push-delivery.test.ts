import { createConfirmationGate, maxPendingOf } from '@agentgw/confirmations';
import type { DevicePlatform } from '@agentgw/db';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { createUser } from '@agentgw/testkit';
import { exportPKCS8, generateKeyPair } from 'jose';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { confirmationHubService } from '../service.js';
import { startFakeApns } from './fake-apns.js';
import { startFakeGoogle } from './fake-google.js';
import { consumePushJobs } from './push-delivery.js';
import { TransientPushError, type DeliveryResult, type PushSender } from './push-sender.js';

let seq = 0;

async function addDevice(
  deps: TestDeps,
  userId: string,
  platform: DevicePlatform,
  pushToken: string,
  isActive = true,
): Promise<string> {
  const id = `device-${++seq}`;
  await deps.db
    .insertInto('devices')
    .values({
      id,
      user_id: userId,
      platform,
      push_token: pushToken,
      device_name: null,
      tenant_id: null,
      is_active: isActive,
    })
    .execute();
  return id;
}

const isActive = async (deps: TestDeps, id: string) =>
  (await deps.db.selectFrom('devices').select('is_active').where('id', '=', id).executeTakeFirstOrThrow()).is_active;

/** A sender whose answers the test scripts per token: a result, or a transient failure (thrown) for the first N tries. */
function scriptedSender(platforms: DevicePlatform[], script: Record<string, DeliveryResult | { failTimes: number }>) {
  const calls: string[] = [];
  const failures = new Map<string, number>();
  const sender: PushSender = {
    name: 'scripted',
    platforms,
    async send(token) {
      calls.push(token);
      const plan = script[token] ?? { ok: true };
      if ('failTimes' in plan) {
        const failed = failures.get(token) ?? 0;
        if (failed < plan.failTimes) {
          failures.set(token, failed + 1);
          throw new TransientPushError('503');
        }
        return { ok: true };
      }
      return plan;
    },
    async close() {},
  };
  return { sender, calls };
}

describe('push delivery', () => {
  let deps: TestDeps;
  let userId: string;
  beforeEach(async () => {
    deps = await createTestDeps();
    userId = (await createUser(deps, { email: `push-${++seq}@example.test` })).id;
  });
  afterEach(() => deps.close());

  const pushJob = (confirmationId = `c-${++seq}`) => ({
    userId,
    title: 'Confirmation required',
    body: 'Approve?',
    data: { confirmationId },
  });

  it("notifies each of the user's active devices on its platform's service, once", async () => {
    const apple = scriptedSender(['ios', 'macos'], {});
    const google = scriptedSender(['android'], {});
    await addDevice(deps, userId, 'ios', 'ios-token');
    await addDevice(deps, userId, 'macos', 'mac-token');
    await addDevice(deps, userId, 'android', 'android-token');
    await addDevice(deps, userId, 'ios', 'retired-token', false);
    const other = (await createUser(deps, { email: `other-${++seq}@example.test` })).id;
    await addDevice(deps, other, 'ios', 'someone-elses-token');
    const consumer = await consumePushJobs(deps, [apple.sender, google.sender]);
    try {
      const job = pushJob();
      await deps.queue.enqueue('push', job, { jobId: `push:${job.data.confirmationId}` });
      await vi.waitFor(() => expect([...apple.calls, ...google.calls]).toHaveLength(3));
      expect(apple.calls.sort()).toEqual(['ios-token', 'mac-token']);
      expect(google.calls).toEqual(['android-token']);
    } finally {
      await consumer.close();
    }
  });

  it('deactivates a device whose token the service reports invalid, and only that one', async () => {
    const apple = scriptedSender(['ios'], { dead: { ok: false, invalidToken: true, reason: 'Unregistered' } });
    const dead = await addDevice(deps, userId, 'ios', 'dead');
    const alive = await addDevice(deps, userId, 'ios', 'alive');
    const consumer = await consumePushJobs(deps, [apple.sender]);
    try {
      await deps.queue.enqueue('push', pushJob());
      await vi.waitFor(async () => expect(await isActive(deps, dead)).toBe(false));
      expect(await isActive(deps, alive)).toBe(true);
    } finally {
      await consumer.close();
    }
  });

  it('retries a transient failure with backoff for that device alone', async () => {
    const apple = scriptedSender(['ios'], { flaky: { failTimes: 1 } });
    await addDevice(deps, userId, 'ios', 'flaky');
    await addDevice(deps, userId, 'ios', 'steady');
    const consumer = await consumePushJobs(deps, [apple.sender]);
    try {
      await deps.queue.enqueue('push', pushJob());
      await vi.waitFor(() => expect(apple.calls.filter((t) => t === 'flaky')).toHaveLength(2));
      expect(apple.calls.filter((t) => t === 'steady')).toHaveLength(1);
    } finally {
      await consumer.close();
    }
  });

  it('acknowledges jobs and sends nothing when push is not configured', async () => {
    await addDevice(deps, userId, 'ios', 'ios-token');
    const consumer = await consumePushJobs(deps, []);
    try {
      await deps.queue.enqueue('push', pushJob());
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await consumer.close();
    }
    expect(await isActive(deps, (await deps.db.selectFrom('devices').select('id').executeTakeFirstOrThrow()).id)).toBe(
      true,
    );
  });
});

describe('push end to end: a held call notifies the confirmer through APNs and FCM (loopback fakes)', () => {
  let deps: TestDeps;
  let host: TestHost | undefined;
  let fakes: { close(): Promise<void> }[];

  afterEach(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    host = undefined;
    await deps.close();
    await Promise.all(fakes.map((f) => f.close()));
  });

  it('sends to the end user devices when CONFIRMATION_REQUIRED is raised', async () => {
    const apnsKeys = await generateKeyPair('ES256', { extractable: true });
    const googleKeys = await generateKeyPair('RS256', { extractable: true });
    const apns = await startFakeApns(apnsKeys.publicKey, { teamId: 'TEAM', keyId: 'KID', topic: 'com.example.app' });
    const google = await startFakeGoogle(googleKeys.publicKey, { email: 'sa@p.iam.gserviceaccount.com', project: 'p' });
    fakes = [apns, google];
    deps = await createTestDeps({
      env: {
        APNS_TEAM_ID: 'TEAM',
        APNS_KEY_ID: 'KID',
        // As an env file would carry it: one line with \n escapes.
        APNS_PRIVATE_KEY: (await exportPKCS8(apnsKeys.privateKey)).replace(/\n/g, '\\n'),
        APNS_TOPIC: 'com.example.app',
        APNS_URL: apns.url,
        FCM_SERVICE_ACCOUNT: JSON.stringify({
          project_id: 'p',
          client_email: 'sa@p.iam.gserviceaccount.com',
          private_key: await exportPKCS8(googleKeys.privateKey),
          token_uri: `${google.url}/token`,
        }),
        FCM_URL: google.url,
      },
    });
    host = await testHost(confirmationHubService, deps);
    const alice = (await createUser(deps, { email: `alice-${++seq}@example.test` })).id;
    const phone = await addDevice(deps, alice, 'ios', 'a1b2c3d4');
    const gone = await addDevice(deps, alice, 'ios', 'gone');
    await addDevice(deps, alice, 'android', 'android-token');
    const gate = createConfirmationGate(deps, { timeoutMs: 60_000, maxPending: maxPendingOf(deps.config) });
    const held = gate.hold(
      {
        auditId: 'a',
        agentId: 'agent',
        userId: alice,
        endUserId: alice,
        tenantId: null,
        providerId: 'p',
        toolName: 'wire_money',
        arguments: { amount: 5 },
        risk: 'critical',
      },
      { signal: AbortSignal.timeout(30_000) },
    );
    held.catch(() => undefined);
    try {
      await vi.waitFor(() =>
        expect(apns.received.map((r) => r.headers[':path']).sort()).toEqual(['/3/device/a1b2c3d4', '/3/device/gone']),
      );
      await vi.waitFor(() => expect(google.messages.map((m) => m.body.message?.token)).toEqual(['android-token']));
      const delivered = apns.received.find((r) => r.headers[':path'] === '/3/device/a1b2c3d4')!;
      expect(delivered.body).toMatchObject({
        aps: { alert: { title: 'Confirmation required' } },
        toolName: 'wire_money',
        risk: 'critical',
      });
      expect(JSON.stringify(delivered.body)).not.toContain('amount');
      await vi.waitFor(async () => expect(await isActive(deps, gone)).toBe(false));
      expect(await isActive(deps, phone)).toBe(true);
    } finally {
      await gate.close();
    }
  });

  it('refuses to start with a half-done APNs configuration, naming what is missing', async () => {
    fakes = [];
    deps = await createTestDeps({ env: { APNS_TEAM_ID: 'TEAM', APNS_PRIVATE_KEY: 'secret-key-material' } });
    const failure = await (async () => confirmationHubService.create(deps))().catch((err: unknown) => err as Error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/APNS_KEY_ID/);
    expect((failure as Error).message).toMatch(/APNS_TOPIC/);
    expect((failure as Error).message).not.toContain('secret-key-material');
  });
});
