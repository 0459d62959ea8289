import { ManualClock } from '@agentgw/core';
import { exportPKCS8, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApnsSender } from './apns.js';
import { startFakeApns } from './fake-apns.js';
import { TransientPushError, type PushSender } from './push-sender.js';

describe('APNs sender against a loopback HTTP/2 fake', () => {
  const identity = { teamId: 'TEAM123456', keyId: 'KEY7654321', topic: 'com.example.gateway' };
  let fake: Awaited<ReturnType<typeof startFakeApns>>;
  let sender: PushSender;
  const clock = new ManualClock(Date.now());
  const message = {
    title: 'Confirmation required',
    body: 'Approve delete_repo (high risk)?',
    data: { confirmationId: 'c-1', toolName: 'delete_repo' },
  };

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    fake = await startFakeApns(publicKey, identity);
    sender = createApnsSender({ ...identity, privateKey: await exportPKCS8(privateKey), baseUrl: fake.url, clock });
  });
  afterAll(async () => {
    await sender.close();
    await fake.close();
  });

  it('delivers over HTTP/2 with a verifiable ES256 provider token, the topic and an aps payload', async () => {
    expect(await sender.send('a1b2c3', message)).toEqual({ ok: true });
    const [request] = fake.received.slice(-1);
    expect(request!.headers[':path']).toBe('/3/device/a1b2c3');
    expect(request!.headers['apns-topic']).toBe(identity.topic);
    expect(request!.headers['apns-priority']).toBe('10');
    expect(request!.jwt).toMatchObject({ header: { alg: 'ES256', kid: identity.keyId }, iss: identity.teamId });
    expect(request!.body).toEqual({
      confirmationId: 'c-1',
      toolName: 'delete_repo',
      aps: {
        alert: { title: message.title, body: message.body },
        sound: 'default',
        'interruption-level': 'time-sensitive',
      },
    });
  });

  it('reuses its provider token and signs a new one after 50 minutes', async () => {
    await sender.send('a1', message);
    await sender.send('a2', message);
    const [one, two] = fake.received.slice(-2).map((r) => r.headers.authorization);
    expect(one).toBe(two);
    clock.advance(51 * 60 * 1000);
    await sender.send('a3', message);
    const three = fake.received.at(-1)!;
    expect(three.headers.authorization).not.toBe(two);
    expect(three.jwt).toMatchObject({ iat: Math.floor(clock.now().getTime() / 1000) });
  });

  it('reports an unregistered (410) or bad device token as invalid', async () => {
    expect(await sender.send('gone', message)).toEqual({ ok: false, invalidToken: true, reason: 'Unregistered' });
    expect(await sender.send('not-hex', message)).toEqual({ ok: false, invalidToken: true, reason: 'BadDeviceToken' });
  });

  it('throws a transient error for a 503, so the job is retried', async () => {
    await expect(sender.send('busy', message)).rejects.toThrow(TransientPushError);
    await expect(sender.send('busy', message)).rejects.toThrow(/503 ServiceUnavailable/);
  });

  it('is refused by the fake with a key the team does not own', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const impostor = createApnsSender({ ...identity, privateKey: await exportPKCS8(privateKey), baseUrl: fake.url });
    try {
      await expect(impostor.send('a1b2c3', message)).rejects.toThrow(/403 InvalidProviderToken/);
    } finally {
      await impostor.close();
    }
  });

  it('keeps a device token from changing the request path', async () => {
    expect(await sender.send('../../x?y', message)).toEqual({ ok: true });
    expect(fake.received.at(-1)!.headers[':path']).toBe('/3/device/..%2F..%2Fx%3Fy');
  });
});
