import type { Database, OAuthFlowRow } from '@agentgw/db';
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { oauthErrors } from './oauth-errors.js';

/** How long a started connection may take (login, consent) before its state is refused. */
export const OAUTH_FLOW_TTL_MS = 10 * 60_000;

/** Only a hash of the state is stored: reading the table does not let anyone complete a flow. */
export const stateHashOf = (state: string): string => createHash('sha256').update(state).digest('base64url');

export interface NewOAuthFlow {
  state: string;
  userId: string;
  tenantId: string | null;
  providerId: string;
  serviceType: string;
  codeVerifier: string;
  redirectUri: string;
  expiresAt: Date;
}

/** Records a flow in flight, in the database so whichever replica receives the callback can complete it. */
export async function saveOAuthFlow(db: Kysely<Database>, flow: NewOAuthFlow, now: Date): Promise<void> {
  // Flows abandoned at the login page go with the next start (bounded table, no sweeper needed).
  await db.deleteFrom('oauth_flows').where('expires_at', '<=', now).execute();
  await db
    .insertInto('oauth_flows')
    .values({
      state_hash: stateHashOf(flow.state),
      user_id: flow.userId,
      tenant_id: flow.tenantId,
      provider_id: flow.providerId,
      service_type: flow.serviceType,
      code_verifier: flow.codeVerifier,
      redirect_uri: flow.redirectUri,
      expires_at: flow.expiresAt,
      created_at: now,
    })
    .execute();
}

/** Which callback the browser arrived at: a service type's own, or the shared one (the flow's redirect URI must be it). */
export type CallbackArrival = { serviceType: string } | { redirectUri: string };

/**
 * Takes (deletes) the flow of `state` for `userId`: single use, so a replayed callback finds
 * nothing. A state started by another user is refused (403) and left for its owner; an unknown,
 * used or expired one, or one started for another callback, is a 400.
 */
export async function takeOAuthFlow(
  db: Kysely<Database>,
  input: { state: string | null; userId: string; arrival: CallbackArrival; now: Date },
): Promise<OAuthFlowRow> {
  if (!input.state) throw oauthErrors.stateInvalid();
  const hash = stateHashOf(input.state);
  const taken = await db
    .deleteFrom('oauth_flows')
    .where('state_hash', '=', hash)
    .where('user_id', '=', input.userId)
    .returningAll()
    .executeTakeFirst();
  if (!taken) {
    const other = await db
      .selectFrom('oauth_flows')
      .select('user_id')
      .where('state_hash', '=', hash)
      .where('expires_at', '>', input.now)
      .executeTakeFirst();
    throw other ? oauthErrors.userMismatch() : oauthErrors.stateInvalid();
  }
  const sameCallback =
    'serviceType' in input.arrival
      ? taken.service_type === input.arrival.serviceType
      : taken.redirect_uri === input.arrival.redirectUri;
  if (taken.expires_at.getTime() <= input.now.getTime() || !sameCallback) throw oauthErrors.stateInvalid();
  return taken;
}
