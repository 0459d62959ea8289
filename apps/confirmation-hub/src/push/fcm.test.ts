import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressRefusedError, egressPolicyFromConfig } from '@agentgw/core';
import { exportPKCS8, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGoogle } from './fake-google.js';
import { createFcmSender, ServiceAccount } from './fcm.js';
import { TransientPushError, type PushSender } from './push-sender.js';

describe('FCM HTTP v1 sender against a loopback fake', () => {
  const account = { email: 'push@proj-1.iam.gserviceaccount.com', project: 'proj-1' };
  let fake: Awaited<ReturnType<typeof startFakeGoogle>>;
  let sender: PushSender;
  let privateKeyPem: string;
  // The strictest policy: the fake lives on loopback, reachable only because it is the configured host.
  const egress = egressPolicyFromConfig({ EGRESS_POLICY: 'public-only' });
  const message = {
    title: 'Confirmation required',
    body: 'Approve delete_repo?',
    data: { confirmationId: 'c-1', attempt: 2, nested: { a: 1 } },
  };

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    fake = await startFakeGoogle(publicKey, account);
    const serviceAccount = ServiceAccount.parse({
      type: 'service_account',
      project_id: account.project,
      client_email: account.email,
      private_key: (privateKeyPem = await exportPKCS8(privateKey)),
      private_key_id: 'key-1',
      token_uri: `${fake.url}/token`,
    });
    sender = createFcmSender({ serviceAccount, baseUrl: fake.url, egress });
  });
  afterAll(async () => {
    await sender.close();
    await fake.close();
  });

  it('exchanges a verifiable RS256 assertion for an access token and sends a v1 message with it', async () => {
    expect(await sender.send('device-token-1', message)).toEqual({ ok: true });
    expect(fake.exchanges).toEqual([{ kid: 'key-1' }]);
    const sent = fake.messages.at(-1)!;
    expect(sent.authorization).toBe('Bearer ya29.fake-1');
    expect(sent.body).toEqual({
      message: {
        token: 'device-token-1',
        notification: { title: message.title, body: message.body },
        data: { confirmationId: 'c-1', attempt: '2', nested: '{"a":1}' },
        android: { priority: 'HIGH' },
      },
    });
  });

  it('caches the access token across deliveries', async () => {
    await sender.send('device-token-2', message);
    await sender.send('device-token-3', message);
    expect(fake.exchanges).toHaveLength(1);
  });

  it('reports UNREGISTERED and an INVALID_ARGUMENT about the token as invalid tokens', async () => {
    expect(await sender.send('gone', message)).toEqual({ ok: false, invalidToken: true, reason: 'UNREGISTERED' });
    expect(await sender.send('malformed', message)).toEqual({
      ok: false,
      invalidToken: true,
      reason: 'INVALID_ARGUMENT',
    });
  });

  it('throws a transient error for UNAVAILABLE, so the job is retried', async () => {
    await expect(sender.send('busy', message)).rejects.toThrow(TransientPushError);
  });

  it('drops a refused access token and exchanges a new one on the next try', async () => {
    fake.revoke(true);
    await expect(sender.send('device-token-4', message)).rejects.toThrow(/401/);
    fake.revoke(false);
    expect(await sender.send('device-token-4', message)).toEqual({ ok: true });
    expect(fake.exchanges).toHaveLength(2);
    expect(fake.messages.at(-1)!.authorization).toBe('Bearer ya29.fake-2');
  });

  it('goes through the egress policy: a redirect from the token endpoint is not followed, a metadata host is refused even when configured', async () => {
    let followed = 0;
    const target = createServer((_req, res) => {
      followed++;
      res.end('{}');
    });
    const redirector = createServer((_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${(target.address() as AddressInfo).port}/token` });
      res.end();
    });
    await Promise.all([target, redirector].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    const serviceAccount = (token_uri: string) =>
      ServiceAccount.parse({
        project_id: account.project,
        client_email: account.email,
        private_key: privateKeyPem,
        token_uri,
      });
    const redirected = createFcmSender({
      serviceAccount: serviceAccount(`http://127.0.0.1:${(redirector.address() as AddressInfo).port}/token`),
      baseUrl: fake.url,
      egress,
    });
    try {
      await expect(redirected.send('device-token-9', message)).rejects.toThrow(/token exchange answered 307/);
      expect(followed).toBe(0);
    } finally {
      await redirected.close();
      for (const s of [target, redirector]) await new Promise<void>((r) => s.close(() => r()));
    }
    for (const [baseUrl, tokenUri] of [
      [fake.url, 'http://169.254.169.254/token'],
      ['http://metadata.google.internal', `${fake.url}/token`],
    ] as const) {
      expect(() => createFcmSender({ serviceAccount: serviceAccount(tokenUri), baseUrl, egress })).toThrow(
        EgressRefusedError,
      );
    }
  });

  it('refuses a service account without a private key', () => {
    expect(ServiceAccount.safeParse({ project_id: 'p', client_email: 'e', private_key: 'nope' }).success).toBe(false);
  });
});
