import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { systemClock, type Clock } from '@agentgw/core';
import { importPKCS8, SignJWT } from 'jose';
import { TransientPushError, type DeliveryResult, type PushMessage, type PushSender } from './push-sender.js';

export const APNS_PRODUCTION_URL = 'https://api.push.apple.com';
export const APNS_SANDBOX_URL = 'https://api.sandbox.push.apple.com';

export interface ApnsOptions {
  teamId: string;
  keyId: string;
  /** The .p8 key (PKCS#8 PEM) the provider token is signed with. */
  privateKey: string;
  /** The app's bundle id, sent as `apns-topic`. */
  topic: string;
  /** APNS_PRODUCTION_URL, APNS_SANDBOX_URL, or a fake's URL in tests (http: speaks HTTP/2 without TLS). */
  baseUrl: string;
  clock?: Clock;
  requestTimeoutMs?: number;
}

/** Apple refuses tokens older than an hour and throttles refreshes more often than every 20 minutes. */
const PROVIDER_TOKEN_LIFETIME_MS = 50 * 60 * 1000;

/** Reasons that mean the token will never be delivered to (Apple's "Handling notification responses"). */
const INVALID_TOKEN_REASONS = new Set(['BadDeviceToken', 'Unregistered', 'DeviceTokenNotForTopic', 'ExpiredToken']);
const STALE_PROVIDER_TOKEN_REASONS = new Set(['ExpiredProviderToken', 'InvalidProviderToken']);

/** The APNs JSON payload: the alert in `aps`, our data beside it as custom keys. */
export function apnsPayload(message: PushMessage): string {
  return JSON.stringify({
    ...message.data,
    aps: {
      alert: { title: message.title, body: message.body },
      sound: 'default',
      'interruption-level': 'time-sensitive',
    },
  });
}

/**
 * APNs over HTTP/2 (one multiplexed session, reopened when it drops) with a token-based
 * provider connection: an ES256 JWT `{ iss: team id, iat }` with the key id in its header,
 * reused for 50 minutes.
 */
export function createApnsSender(options: ApnsOptions): PushSender {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  const keyPromise = importPKCS8(options.privateKey, 'ES256');
  // Surfaced on first use; a bad key must not crash the process as an unhandled rejection.
  keyPromise.catch(() => undefined);
  let providerToken: { value: string; issuedAt: number } | undefined;
  let session: ClientHttp2Session | undefined;

  async function bearer(): Promise<string> {
    const now = clock.now().getTime();
    if (!providerToken || now - providerToken.issuedAt > PROVIDER_TOKEN_LIFETIME_MS) {
      const value = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: options.keyId })
        .setIssuer(options.teamId)
        .setIssuedAt(Math.floor(now / 1000))
        .sign(await keyPromise);
      providerToken = { value, issuedAt: now };
    }
    return providerToken.value;
  }

  function openSession(): ClientHttp2Session {
    if (session && !session.closed && !session.destroyed) return session;
    const opened = connect(options.baseUrl);
    opened.on('error', () => opened.destroy());
    opened.on('goaway', () => opened.close());
    opened.on('close', () => {
      if (session === opened) session = undefined;
    });
    session = opened;
    return opened;
  }

  function post(
    path: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const request = openSession().request({
        [constants.HTTP2_HEADER_METHOD]: 'POST',
        [constants.HTTP2_HEADER_PATH]: path,
        ...headers,
      });
      let status = 0;
      let text = '';
      request.setTimeout(timeoutMs, () => request.close(constants.NGHTTP2_CANCEL));
      request.setEncoding('utf8');
      request.on('response', (h) => {
        status = Number(h[constants.HTTP2_HEADER_STATUS]);
      });
      request.on('data', (chunk: string) => {
        if (text.length < 64 * 1024) text += chunk;
      });
      request.on('end', () =>
        status
          ? resolve({ status, body: text })
          : reject(new TransientPushError('APNs closed the stream without an answer')),
      );
      request.on('error', (err: Error) => reject(new TransientPushError(`APNs request failed: ${err.message}`)));
      request.end(body);
    });
  }

  return {
    name: 'apns',
    platforms: ['ios', 'macos'],
    async send(pushToken, message): Promise<DeliveryResult> {
      const response = await post(
        `/3/device/${encodeURIComponent(pushToken)}`,
        {
          authorization: `bearer ${await bearer()}`,
          'apns-topic': options.topic,
          'apns-push-type': 'alert',
          'apns-priority': '10',
          'content-type': 'application/json',
        },
        apnsPayload(message),
      );
      if (response.status === 200) return { ok: true };
      let reason = '';
      try {
        reason = String((JSON.parse(response.body) as { reason?: unknown }).reason ?? '');
      } catch {
        // Not JSON: keep the status alone.
      }
      if (response.status === 410 || INVALID_TOKEN_REASONS.has(reason))
        return { ok: false, invalidToken: true, reason: reason || 'Unregistered' };
      if (STALE_PROVIDER_TOKEN_REASONS.has(reason)) providerToken = undefined;
      throw new TransientPushError(`APNs answered ${response.status}${reason ? ` ${reason}` : ''}`);
    },
    async close() {
      session?.close();
      session = undefined;
    },
  };
}
