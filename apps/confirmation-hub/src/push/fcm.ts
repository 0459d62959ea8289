import {
  assertUrlEgressAllowed,
  createEgressDispatcher,
  egressFetch,
  systemClock,
  withAllowedHosts,
  type Clock,
  type EgressPolicy,
} from '@agentgw/core';
import { importPKCS8, SignJWT } from 'jose';
import { z } from 'zod';
import { TransientPushError, type DeliveryResult, type PushMessage, type PushSender } from './push-sender.js';

export const FCM_DEFAULT_URL = 'https://fcm.googleapis.com';
const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

/** The fields of a Google service-account JSON key that FCM HTTP v1 needs. */
export const ServiceAccount = z.object({
  project_id: z.string().min(1),
  client_email: z.string().min(1),
  private_key: z.string().includes('PRIVATE KEY'),
  private_key_id: z.string().optional(),
  token_uri: z.url().default('https://oauth2.googleapis.com/token'),
});
export type ServiceAccount = z.infer<typeof ServiceAccount>;

export interface FcmOptions {
  serviceAccount: ServiceAccount;
  /** FCM_DEFAULT_URL, or a fake's URL in tests. */
  baseUrl: string;
  /** The egress policy (EGRESS_POLICY/EGRESS_ALLOW); baseUrl's and token_uri's hosts are allowed on top of it. */
  egress: EgressPolicy;
  clock?: Clock;
  requestTimeoutMs?: number;
}

/**
 * The hosts FCM talks to, which the operator configured (FCM_URL, the key's token_uri): checked
 * like a stored URL under allow-private (a metadata name or a link-local/metadata literal is
 * refused even when configured), then allowed by the egress policy as VAULT_URL is.
 */
export function fcmHosts(options: Pick<FcmOptions, 'baseUrl' | 'serviceAccount'>): string[] {
  const strict: EgressPolicy = { mode: 'allow-private', allowCidrs: [], allowHosts: new Set() };
  return [options.baseUrl, options.serviceAccount.token_uri].map((url) => {
    assertUrlEgressAllowed(strict, url);
    return new URL(url).hostname;
  });
}

interface FcmErrorBody {
  error?: {
    status?: string;
    message?: string;
    details?: { '@type'?: string; errorCode?: string; fieldViolations?: { field?: string }[] }[];
  };
}

/** FCM's verdicts that the registration token itself is dead or wrong (FCM v1 ErrorCode). */
function invalidTokenReason(body: FcmErrorBody): string | null {
  const error = body.error;
  const codes = new Set([error?.status, ...(error?.details ?? []).map((d) => d.errorCode)]);
  if (codes.has('UNREGISTERED')) return 'UNREGISTERED';
  if (codes.has('INVALID_ARGUMENT')) {
    // INVALID_ARGUMENT also covers a malformed message; only one about the token retires the device.
    const aboutToken =
      (error?.details ?? []).some((d) => (d.fieldViolations ?? []).some((v) => v.field === 'message.token')) ||
      /registration token/i.test(error?.message ?? '');
    if (aboutToken) return 'INVALID_ARGUMENT';
  }
  return null;
}

/** FCM `data` values must be strings. */
const stringData = (data: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));

/**
 * FCM HTTP v1 with a service account: an RS256 JWT assertion (iss = client_email, aud =
 * token_uri, scope firebase.messaging) exchanged at token_uri for an access token, cached
 * until a minute before it expires; messages POSTed to `/v1/projects/{id}/messages:send`.
 * Both through the egress policy's dispatcher (see fcmHosts); a redirect is an error, not followed.
 */
export function createFcmSender(options: FcmOptions): PushSender {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  const account = options.serviceAccount;
  // Through the egress dispatcher: connect-time address checks, no redirects followed.
  const dispatcher = createEgressDispatcher(withAllowedHosts(options.egress, fcmHosts(options)));
  const fetch = egressFetch(dispatcher);
  const keyPromise = importPKCS8(account.private_key, 'RS256');
  keyPromise.catch(() => undefined);
  let accessToken: { value: string; expiresAt: number } | undefined;
  let refreshing: Promise<string> | undefined;

  async function fetchAccessToken(): Promise<string> {
    const now = Math.floor(clock.now().getTime() / 1000);
    const assertion = await new SignJWT({ scope: FCM_SCOPE })
      .setProtectedHeader({
        alg: 'RS256',
        typ: 'JWT',
        ...(account.private_key_id ? { kid: account.private_key_id } : {}),
      })
      .setIssuer(account.client_email)
      .setAudience(account.token_uri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(await keyPromise);
    const res = await fetch(account.token_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      signal: AbortSignal.timeout(timeoutMs),
    }).catch((err: unknown) => {
      throw new TransientPushError(`FCM token exchange failed: ${(err as Error).message}`);
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown };
    if (!res.ok || typeof body.access_token !== 'string')
      throw new TransientPushError(`FCM token exchange answered ${res.status}`);
    const lifetime = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    accessToken = { value: body.access_token, expiresAt: clock.now().getTime() + (lifetime - 60) * 1000 };
    return body.access_token;
  }

  function bearer(): Promise<string> {
    if (accessToken && clock.now().getTime() < accessToken.expiresAt) return Promise.resolve(accessToken.value);
    // One exchange at a time, however many deliveries are waiting for it.
    refreshing ??= fetchAccessToken().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  }

  return {
    name: 'fcm',
    platforms: ['android'],
    async send(pushToken, message: PushMessage): Promise<DeliveryResult> {
      const url = `${options.baseUrl.replace(/\/$/, '')}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`;
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${await bearer()}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          message: {
            token: pushToken,
            notification: { title: message.title, body: message.body },
            data: stringData(message.data),
            android: { priority: 'HIGH' },
          },
        }),
        signal: AbortSignal.timeout(timeoutMs),
      }).catch((err: unknown) => {
        throw new TransientPushError(`FCM request failed: ${(err as Error).message}`);
      });
      if (res.ok) {
        await res.body?.cancel();
        return { ok: true };
      }
      const body = (await res.json().catch(() => ({}))) as FcmErrorBody;
      const invalid = invalidTokenReason(body);
      if (invalid) return { ok: false, invalidToken: true, reason: invalid };
      if (res.status === 401) accessToken = undefined;
      throw new TransientPushError(`FCM answered ${res.status}${body.error?.status ? ` ${body.error.status}` : ''}`);
    },
    async close() {
      await dispatcher.close();
    },
  };
}
