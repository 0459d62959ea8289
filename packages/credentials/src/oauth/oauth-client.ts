import type { Clock, Logger } from '@agentgw/core';
import * as oauth from 'oauth4webapi';
import { AuthorizationServers, requestOptions } from './authorization-server.js';
import { oauthErrors } from './oauth-errors.js';
import type { OAuthProviderConfig } from './oauth-provider-config.js';

/** What a token endpoint issued; the refresh token is absent when the server issues none. */
export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  /** From `expires_in`; null when the server does not say. */
  expiresAt: Date | null;
  scope: string | null;
}

/** A refresh either yields new tokens, is refused by the server (reconnect), or fails for now (try later). */
export type RefreshOutcome =
  { kind: 'refreshed'; tokens: TokenSet } | { kind: 'refused'; error: string } | { kind: 'failed'; reason: string };

const clientOf = (cfg: OAuthProviderConfig): oauth.Client => ({ client_id: cfg.clientId });
const clientAuthOf = (cfg: OAuthProviderConfig): oauth.ClientAuth => {
  if (cfg.clientAuthMethod === 'none' || cfg.clientSecret === null) return oauth.None();
  return cfg.clientAuthMethod === 'client_secret_post'
    ? oauth.ClientSecretPost(cfg.clientSecret)
    : oauth.ClientSecretBasic(cfg.clientSecret);
};
const resourceParams = (cfg: OAuthProviderConfig) =>
  cfg.resource ? { additionalParameters: { resource: cfg.resource } } : {};
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : 'unknown error');

/**
 * The vault's OAuth client (oauth4webapi over the egress-checked fetch): builds authorization
 * URLs, validates authorization responses (state, RFC 9207 `iss`), exchanges codes, refreshes
 * and revokes tokens. Holds no user state.
 */
export class OAuthClient {
  private readonly servers: AuthorizationServers;

  constructor(
    private readonly fetch: typeof globalThis.fetch,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.servers = new AuthorizationServers(fetch, clock);
  }

  /** The URL the user's browser is sent to: code flow, PKCE S256, the flow's state, the provider's scopes, resource and extra parameters. */
  async authorizationUrl(
    cfg: OAuthProviderConfig,
    input: { state: string; codeVerifier: string; redirectUri: string },
  ): Promise<string> {
    const as = await this.servers.resolve(cfg.server);
    const url = new URL(as.authorization_endpoint!);
    for (const [key, value] of Object.entries(cfg.authorizationParams)) url.searchParams.set(key, value);
    url.searchParams.set('client_id', cfg.clientId);
    url.searchParams.set('redirect_uri', input.redirectUri);
    url.searchParams.set('response_type', 'code');
    if (cfg.scopes.length > 0) url.searchParams.set('scope', cfg.scopes.join(' '));
    url.searchParams.set('state', input.state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(input.codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
    if (cfg.resource) url.searchParams.set('resource', cfg.resource);
    return url.href;
  }

  /**
   * Checks the authorization response (state, `iss` against the issuer, error) and exchanges its
   * code with the PKCE verifier. Refusals are the 4xx of `oauthErrors` (a code the server refuses
   * as `invalid_grant` included); a token endpoint that fails otherwise is a 502.
   */
  async exchangeCode(
    cfg: OAuthProviderConfig,
    input: { callback: URL; state: string; codeVerifier: string; redirectUri: string },
  ): Promise<TokenSet> {
    const as = await this.servers.resolve(cfg.server);
    const iss = input.callback.searchParams.get('iss');
    if (iss !== null && iss !== as.issuer) throw oauthErrors.issuerMismatch();
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(as, clientOf(cfg), input.callback, input.state);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) throw oauthErrors.authorizationDenied(err.error);
      throw oauthErrors.responseInvalid(messageOf(err));
    }
    try {
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        clientOf(cfg),
        clientAuthOf(cfg),
        params,
        input.redirectUri,
        input.codeVerifier,
        {
          ...requestOptions(this.fetch),
          ...resourceParams(cfg),
        },
      );
      return this.tokenSetOf(await oauth.processAuthorizationCodeResponse(as, clientOf(cfg), response));
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError)
        throw err.error === 'invalid_grant' ? oauthErrors.codeRejected() : oauthErrors.tokenExchangeFailed(err.error);
      throw oauthErrors.tokenExchangeFailed(messageOf(err));
    }
  }

  /** Uses the refresh token; an `invalid_grant` (revoked, expired, reused) is `refused`, anything else `failed`. */
  async refresh(cfg: OAuthProviderConfig, refreshToken: string): Promise<RefreshOutcome> {
    try {
      const as = await this.servers.resolve(cfg.server);
      const response = await oauth.refreshTokenGrantRequest(as, clientOf(cfg), clientAuthOf(cfg), refreshToken, {
        ...requestOptions(this.fetch),
        ...resourceParams(cfg),
      });
      return {
        kind: 'refreshed',
        tokens: this.tokenSetOf(await oauth.processRefreshTokenResponse(as, clientOf(cfg), response)),
      };
    } catch (err) {
      if (
        err instanceof oauth.ResponseBodyError &&
        (err.error === 'invalid_grant' || err.error === 'unauthorized_client')
      )
        return { kind: 'refused', error: err.error };
      return { kind: 'failed', reason: messageOf(err) };
    }
  }

  /** RFC 7009 revocation where the server supports it; best effort (a failure is logged, never thrown). Returns whether it was revoked. */
  async revoke(cfg: OAuthProviderConfig, token: string, hint: 'refresh_token' | 'access_token'): Promise<boolean> {
    try {
      const as = await this.servers.resolve(cfg.server);
      if (!as.revocation_endpoint) return false;
      const response = await oauth.revocationRequest(as, clientOf(cfg), clientAuthOf(cfg), token, {
        ...requestOptions(this.fetch),
        additionalParameters: { token_type_hint: hint },
      });
      await oauth.processRevocationResponse(response);
      return true;
    } catch (err) {
      this.logger.warn(
        { providerId: cfg.providerId, serviceType: cfg.serviceType, reason: messageOf(err) },
        'OAuth token revocation failed',
      );
      return false;
    }
  }

  private tokenSetOf(response: oauth.TokenEndpointResponse): TokenSet {
    const expiresIn = typeof response.expires_in === 'number' && response.expires_in > 0 ? response.expires_in : null;
    return {
      accessToken: response.access_token,
      refreshToken: response.refresh_token ?? null,
      expiresAt: expiresIn === null ? null : new Date(this.clock.now().getTime() + expiresIn * 1000),
      scope: response.scope ?? null,
    };
  }
}
