import type { Database } from '@agentgw/db';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { maskBody } from './masking.js';

/**
 * Every identity event type: sign-ins and connections an operator must be able to reconstruct,
 * apart from tool calls (the audit log). Declared once here so every service writes the same names.
 */
export const IDENTITY_EVENT_TYPES = [
  /** An OAuth client registered itself (RFC 7591; anonymous, so no actor). */
  'oauth.client_registered',
  /** A user allowed a client an endpoint and scopes, now remembered for the next sign-in. */
  'oauth.consent_given',
  /** A user allowed a client again where a remembered consent already covered the request. */
  'oauth.consent_reused',
  /** A user refused a client. */
  'oauth.consent_denied',
  /** A grant and all its tokens ended: `details.by` says whether a user, the client or reuse detection did it. */
  'oauth.grant_revoked',
  /** A user connected an account at an upstream service (the vault stored its OAuth tokens). */
  'connected_account.linked',
  /** The vault refreshed a connected account's access token. */
  'connected_account.refreshed',
  /** The service refused the refresh: the user must connect again. */
  'connected_account.refresh_refused',
  /** A user removed a connected account (its tokens revoked at the service where supported). */
  'connected_account.disconnected',
  /** A token exchange (RFC 8693) for a call was refused: by policy or by the service's token endpoint. */
  'token_exchange.refused',
] as const;

/** One of IDENTITY_EVENT_TYPES. */
export type IdentityEventType = (typeof IDENTITY_EVENT_TYPES)[number];

/** What is recorded: who did what, to whose identity, through which client; details never hold a token. */
export interface IdentityEvent {
  type: IdentityEventType;
  /** The user who acted; null when a client or the gateway itself did (then `details.by` names it). */
  actorId: string | null;
  /** The user whose sign-in, grant or connection it concerns; null for a client registration. */
  userId: string | null;
  tenantId: string | null;
  /** The OAuth client involved (this gateway's clients), else null. */
  clientId: string | null;
  details: Record<string, unknown>;
}

/**
 * Writes one identity event row (`identity_events`, migration 0014). `details` go through the
 * audit log's masking (secret-named fields masked, size capped), so a careless caller cannot
 * store a token. Awaited by the caller: an identity change is not answered before it is recorded.
 */
export async function recordIdentityEvent(db: Kysely<Database>, event: IdentityEvent): Promise<void> {
  await db
    .insertInto('identity_events')
    .values({
      id: randomUUID(),
      type: event.type,
      actor_id: event.actorId,
      user_id: event.userId,
      tenant_id: event.tenantId,
      client_id: event.clientId,
      details: JSON.stringify(maskBody(event.details)),
    })
    .execute();
}
