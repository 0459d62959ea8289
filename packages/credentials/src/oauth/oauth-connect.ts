import { recordIdentityEvent } from '@agentgw/audit';
import { ForbiddenError, NotImplementedError, type Clock, type Config } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import * as oauth from 'oauth4webapi';
import { consoleCredentialsUrl, findCredentialProviders, sharedOAuthCallbackUrl } from '../auth-urls.js';
import type { CredentialMetadata, Vault } from '../vault.js';
import type { VaultOAuth } from './vault-oauth.js';
import { saveOAuthFlow, takeOAuthFlow } from './oauth-flows.js';
import { oauthConfigOf, type OAuthProviderConfig } from './oauth-provider-config.js';
import { redirectUriFor } from './upstream-client-document.js';

export interface OAuthConnectDeps {
  db: Kysely<Database>;
  config: Config;
  clock: Clock;
  vault: Vault;
  oauth: VaultOAuth;
}

/** Connecting a user's account at a service through its OAuth authorization server (code flow + PKCE). */
export interface OAuthConnect {
  /** Starts a connection: the authorization URL to send the user's browser to. */
  start(input: { userId: string; tenantId: string | null; serviceType: string }): Promise<{ authUrl: string }>;
  /** Completes it from the callback URL the browser arrived with (`serviceType` null: the shared callback, the flow names it); where to send the user next. */
  complete(input: {
    userId: string;
    serviceType: string | null;
    callback: URL;
  }): Promise<{ credential: CredentialMetadata; returnTo: string }>;
}

const noServer = (serviceType: string) =>
  new NotImplementedError(
    `No OAuth authorization server is configured for "${serviceType}" (the credential provider needs an issuer, or authorizeUrl and tokenUrl); store a JWT or API key instead`,
  );

/** The connect flow over the vault: flow state in the database (any replica completes it), tokens sealed by the vault. */
export function createOAuthConnect(deps: OAuthConnectDeps): OAuthConnect {
  const { db, config, clock, vault } = deps;

  async function providerFor(tenantId: string | null, serviceType: string): Promise<OAuthProviderConfig> {
    const row = (await findCredentialProviders(db, tenantId, [serviceType])).get(serviceType);
    const cfg = row ? oauthConfigOf(row, deps.oauth.secrets) : null;
    if (!cfg) throw noServer(serviceType);
    return cfg;
  }

  return {
    async start({ userId, tenantId, serviceType }) {
      const cfg = await providerFor(tenantId, serviceType);
      const user = await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
      if (!user)
        throw new ForbiddenError(
          'Credentials can only be stored for users registered with the gateway',
          'USER_NOT_REGISTERED',
        );
      const state = oauth.generateRandomState();
      const codeVerifier = oauth.generateRandomCodeVerifier();
      const redirectUri = redirectUriFor(config, { clientId: cfg.clientId, serviceType });
      const authUrl = await deps.oauth.client.authorizationUrl(cfg, { state, codeVerifier, redirectUri });
      const now = clock.now();
      await saveOAuthFlow(
        db,
        {
          state,
          userId,
          tenantId,
          providerId: cfg.providerId,
          serviceType,
          codeVerifier,
          redirectUri,
          expiresAt: new Date(now.getTime() + config.OAUTH_FLOW_TTL_MS),
        },
        now,
      );
      return { authUrl };
    },

    async complete({ userId, serviceType, callback }) {
      const state = callback.searchParams.get('state');
      const arrival = serviceType === null ? { redirectUri: sharedOAuthCallbackUrl(config) } : { serviceType };
      const flow = await takeOAuthFlow(db, { state, userId, arrival, now: clock.now() });
      const providerRow = await db
        .selectFrom('credential_providers')
        .selectAll()
        .where('id', '=', flow.provider_id)
        .executeTakeFirst();
      const cfg = providerRow ? oauthConfigOf(providerRow, deps.oauth.secrets) : null;
      if (!cfg) throw noServer(flow.service_type);
      const tokens = await deps.oauth.client.exchangeCode(cfg, {
        callback,
        state: state!,
        codeVerifier: flow.code_verifier,
        redirectUri: flow.redirect_uri,
      });
      const credential = await vault.storeOAuth({
        userId,
        tenantId: flow.tenant_id,
        serviceType: flow.service_type,
        providerId: cfg.providerId,
        tokens,
      });
      await recordIdentityEvent(db, {
        type: 'connected_account.linked',
        actorId: userId,
        userId,
        tenantId: flow.tenant_id,
        clientId: null,
        details: { connectionId: credential.id, serviceType: flow.service_type, providerId: cfg.providerId },
      });
      return { credential, returnTo: consoleCredentialsUrl(config, { connected: flow.service_type }) };
    },
  };
}
