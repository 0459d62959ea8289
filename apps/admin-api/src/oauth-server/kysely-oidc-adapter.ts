import { recordIdentityEvent } from '@agentgw/audit';
import type { EventBus } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { withLoopbackAsNative } from './loopback-redirects.js';

/** What the adapter reads and writes beside the rows: the bus that tells every replica a grant was revoked. */
export interface OidcAdapterDeps {
  db: Kysely<Database>;
  bus: EventBus;
  /** Looks up clients that are not stored (client ID metadata documents); null when `id` is not one. */
  externalClient: (id: string) => Promise<AdapterPayload | null>;
  /** Told whose grant oidc-provider just revoked (its revocation event no longer finds the rows). */
  grantRevoked: (grantId: string, accountId: string) => void;
}

/**
 * How long a registered client lives until it obtains a grant (seconds): anonymous registration
 * would otherwise keep every abandoned client for ever. Its first grant makes it permanent.
 */
export const UNCLAIMED_CLIENT_TTL = 86_400;

/** The models whose rows carry a grant id: revoking a grant deletes them all. */
const GRANT_BOUND = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'Grant',
]);

/**
 * oidc-provider's storage over Kysely: one `oauth_models` row per model and id, so any replica
 * answers any step of a flow. Revoking a grant (refresh-token reuse, a user's revocation)
 * deletes its rows and announces `oauth.grant_revoked`, which every mcp-gateway replica hears.
 */
export class KyselyOidcAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly deps: OidcAdapterDeps,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    // Clients are stored without expiry by oidc-provider: a new one expires unless it obtains a grant.
    const lifetime = this.model === 'Client' ? UNCLAIMED_CLIENT_TTL : expiresIn;
    const row = {
      payload: JSON.stringify(payload),
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      account_id: payload.accountId ?? null,
      expires_at: lifetime ? new Date(Date.now() + lifetime * 1000) : null,
    };
    await this.deps.db
      .insertInto('oauth_models')
      .values({ model: this.model, id, ...row })
      .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet(row))
      .execute();
    if (this.model === 'Grant' && typeof payload.clientId === 'string') await this.claimClient(payload.clientId);
    if (this.model === 'Client') await this.registered(id, payload);
  }

  /** Records a registration (the only time oidc-provider stores a client: registration management is off). */
  private async registered(clientId: string, payload: AdapterPayload): Promise<void> {
    const uris = Array.isArray(payload.redirect_uris) ? payload.redirect_uris.map(String) : [];
    await recordIdentityEvent(this.deps.db, {
      type: 'oauth.client_registered',
      actorId: null,
      userId: null,
      tenantId: null,
      clientId,
      details: {
        clientName: typeof payload.client_name === 'string' ? payload.client_name : null,
        redirectUris: uris,
        clientAuthentication: payload.token_endpoint_auth_method ?? null,
      },
    });
  }

  /** A client that obtained a grant is in use: it no longer expires (registered ones only; documents are not stored). */
  private async claimClient(clientId: string): Promise<void> {
    await this.deps.db
      .updateTable('oauth_models')
      .set({ expires_at: null })
      .where('model', '=', 'Client')
      .where('id', '=', clientId)
      .where('expires_at', 'is not', null)
      .execute();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const row = await this.live().where('id', '=', id).executeTakeFirst();
    const payload = row?.payload ?? (this.model === 'Client' ? await this.deps.externalClient(id) : null);
    if (!payload) return undefined;
    return this.model === 'Client' ? withLoopbackAsNative(payload) : payload;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return (await this.live().where('uid', '=', uid).executeTakeFirst())?.payload;
  }

  async findByUserCode(): Promise<AdapterPayload | undefined> {
    // The device flow is not enabled: no model is ever stored under a user code.
    return undefined;
  }

  async consume(id: string): Promise<void> {
    const row = await this.live().where('id', '=', id).executeTakeFirst();
    if (!row) return;
    const payload = { ...(row.payload as AdapterPayload), consumed: Math.floor(Date.now() / 1000) };
    await this.deps.db
      .updateTable('oauth_models')
      .set({ payload: JSON.stringify(payload) })
      .where('model', '=', this.model)
      .where('id', '=', id)
      .execute();
  }

  async destroy(id: string): Promise<void> {
    await this.deps.db.deleteFrom('oauth_models').where('model', '=', this.model).where('id', '=', id).execute();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    // Called once per model, concurrently: the call whose delete found the rows names the account.
    const accountId = await revokeGrant(this.deps, grantId);
    if (accountId !== null) this.deps.grantRevoked(grantId, accountId);
  }

  private live() {
    return this.deps.db
      .selectFrom('oauth_models')
      .select(['payload'])
      .where('model', '=', this.model)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date())]));
  }
}

/**
 * Deletes every token, code and the grant itself of `grantId`, and tells every replica its access
 * tokens are dead. Answers the account the deleted rows belonged to (null when none was left).
 */
export async function revokeGrant(deps: Pick<OidcAdapterDeps, 'db' | 'bus'>, grantId: string): Promise<string | null> {
  const deleted = await deps.db
    .deleteFrom('oauth_models')
    .where('model', 'in', [...GRANT_BOUND])
    .where((eb) => eb.or([eb('grant_id', '=', grantId), eb.and([eb('model', '=', 'Grant'), eb('id', '=', grantId)])]))
    .returning('account_id')
    .execute();
  await deps.bus.publish('oauth.grant_revoked', { grantId });
  return deleted.find((row) => row.account_id !== null)?.account_id ?? null;
}
