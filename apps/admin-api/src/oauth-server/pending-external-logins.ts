import { createHash } from 'node:crypto';
import type { Database } from '@agentgw/db';
import { sql, type Kysely } from 'kysely';

/** What a "continue with" callback needs from its start: kept in the database, so any replica answers the callback. */
export interface PendingExternalLogin {
  /** The MCP client's pending sign-in (oidc-provider interaction) this login is for. */
  uid: string;
  loginId: string;
  codeVerifier: string;
  nonce: string;
  /** SHA-256 of the browser's binding cookie: the callback must come back to the browser that started it. */
  browser: string;
}

/** How long the person has at the identity provider before the started login is forgotten. */
export const PENDING_LOGIN_TTL_SECONDS = 600;

/** The rows' model in `oauth_models` (beside oidc-provider's own models, never one of theirs). */
const MODEL = 'ExternalLogin';

/** SHA-256 hex: state values and browser bindings are stored only as digests. */
export const digest = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Started external logins keyed by their `state`, each readable once. */
export class PendingExternalLogins {
  constructor(private readonly db: Kysely<Database>) {}

  /** Remembers a started login under its `state` for PENDING_LOGIN_TTL_SECONDS (and forgets the expired ones). */
  async save(state: string, pending: PendingExternalLogin): Promise<void> {
    // Nobody else deletes these rows: logins abandoned at the identity provider go here.
    await this.db
      .deleteFrom('oauth_models')
      .where('model', '=', MODEL)
      .where('expires_at', '<', sql<Date>`now()`)
      .execute();
    await this.db
      .insertInto('oauth_models')
      .values({
        model: MODEL,
        id: digest(state),
        payload: JSON.stringify(pending),
        grant_id: null,
        uid: null,
        account_id: null,
        expires_at: new Date(Date.now() + PENDING_LOGIN_TTL_SECONDS * 1000),
      })
      .execute();
  }

  /** The login started under `state`, deleted as it is read (a replayed callback finds nothing); null when unknown or expired. */
  async take(state: string): Promise<PendingExternalLogin | null> {
    const row = await this.db
      .deleteFrom('oauth_models')
      .where('model', '=', MODEL)
      .where('id', '=', digest(state))
      .returning(['payload', 'expires_at'])
      .executeTakeFirst();
    if (!row || row.expires_at === null || row.expires_at.getTime() <= Date.now()) return null;
    return row.payload as unknown as PendingExternalLogin;
  }
}
