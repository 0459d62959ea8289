import type { DevicePlatform } from '@agentgw/db';

/** What a notification says; `data` travels as custom keys (APNs) or string data (FCM). */
export interface PushMessage {
  title: string;
  body: string;
  data: Record<string, unknown>;
}

/**
 * How one delivery went. `invalid-token`: the service says the token will never work again
 * (uninstalled app, token of another app), so the device is deactivated. Transient failures
 * (network, 429, 5xx, an expired auth token) are thrown, so the job is retried with backoff.
 */
export type DeliveryResult = { ok: true } | { ok: false; invalidToken: true; reason: string };

/** One push service (APNs, FCM), as push delivery sees it. */
export interface PushSender {
  readonly name: string;
  readonly platforms: readonly DevicePlatform[];
  send(pushToken: string, message: PushMessage): Promise<DeliveryResult>;
  close(): Promise<void>;
}

/** A failure worth retrying later; the message never contains a credential. */
export class TransientPushError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransientPushError';
  }
}
