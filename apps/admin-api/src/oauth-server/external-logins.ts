import { randomBytes } from 'node:crypto';
import { ASYMMETRIC_ALGORITHMS, type AuthService } from '@agentgw/auth';
import {
  AppError,
  DependencyUnavailableError,
  EgressRefusedError,
  ForbiddenError,
  NotFoundError,
  UpstreamError,
  type Clock,
  type ExternalIssuer,
} from '@agentgw/core';
import { AuthorizationServers } from '@agentgw/credentials';
import type { Database } from '@agentgw/db';
import { createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { Kysely } from 'kysely';
import * as oauth from 'oauth4webapi';
import { digest, PendingExternalLogins, type PendingExternalLogin } from './pending-external-logins.js';

/** What the sign-in page shows for an external login: never the client registration. */
export interface ExternalLoginOption {
  id: string;
  name: string;
}

/**
 * Why a login failed, in the one word the console's /connect page has a message for: never the
 * error's text, which may quote what the identity provider or the query string said.
 */
export type ExternalLoginFailure = 'cancelled' | 'refused' | 'not_registered' | 'unavailable';

/**
 * A login refused once the sign-in it belongs to is known (a callback whose pending login was read
 * back in the browser that started it, or a start for a pending sign-in): that browser may be sent
 * back to sign-in `uid` (the database's, never the query's) with `reason`; any other client gets
 * `error` as it is.
 */
export class ExternalLoginFailed extends Error {
  constructor(
    readonly uid: string,
    readonly reason: ExternalLoginFailure,
    readonly error: AppError,
  ) {
    super(error.message);
    this.name = 'ExternalLoginFailed';
  }
}

/** A person signed in at an external issuer and the gateway user they are. */
export interface FinishedExternalLogin {
  uid: string;
  user: Parameters<AuthService['signUserToken']>[0];
}

export interface ExternalLoginsDeps {
  db: Kysely<Database>;
  auth: Pick<AuthService, 'externalUser'>;
  clock: Clock;
  issuers: ExternalIssuer[];
  /** The egress-checked fetch every request to an identity provider goes through. */
  fetch: typeof globalThis.fetch;
  /** This gateway's redirect URI, registered at every identity provider. */
  callbackUrl: string;
}

type LoginIssuer = ExternalIssuer & { login: NonNullable<ExternalIssuer['login']> };

/** Every call to an identity provider gives up after this long. */
const REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_SCOPES = ['openid', 'email'];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** 401 EXTERNAL_LOGIN_REFUSED: the callback or what the identity provider answered does not hold. */
const refused = (why: string) =>
  new AppError(401, 'EXTERNAL_LOGIN_REFUSED', `The external sign-in was refused: ${why}`);

/** 401 EXTERNAL_LOGIN_REFUSED because the person said no at the identity provider, or was not let in there (RFC 6749 section 4.1.2.1). */
class DeniedAtProvider extends AppError {
  constructor() {
    super(
      401,
      'EXTERNAL_LOGIN_REFUSED',
      'The external sign-in was refused: the identity provider answered access_denied',
    );
  }
}

/** What went wrong talking to the identity provider, as the caller's error (never a 500). */
function loginError(err: unknown): AppError {
  // Before the AppError case: EgressRefusedError is one (a 403 that is no fault of the person's).
  if (err instanceof EgressRefusedError)
    return new DependencyUnavailableError('The identity provider is refused by the egress policy');
  if (err instanceof AppError) return err;
  if (err instanceof oauth.AuthorizationResponseError && err.error === 'access_denied') return new DeniedAtProvider();
  if (err instanceof oauth.AuthorizationResponseError) return refused(`the identity provider answered ${err.error}`);
  if (err instanceof oauth.ResponseBodyError)
    return refused(`the identity provider's token endpoint answered ${err.error}`);
  if (err instanceof oauth.OperationProcessingError) return refused(err.message);
  if (err instanceof joseErrors.JOSEError) return refused(`the ID token's signature does not hold (${err.code})`);
  return new UpstreamError('The identity provider could not be reached');
}

/** The console's word for why a login failed. */
function failureOf(error: AppError): ExternalLoginFailure {
  if (error instanceof DeniedAtProvider) return 'cancelled';
  if (error.code === 'EXTERNAL_USER_NOT_REGISTERED') return 'not_registered';
  return error.status === 401 ? 'refused' : 'unavailable';
}

/**
 * "Continue with" an external issuer on the MCP sign-in page: the authorization code flow with
 * PKCE S256, `state` and `nonce` at that OpenID provider (its metadata discovered), the ID token
 * checked (signature by the provider's key set, issuer, audience, nonce), and the person mapped
 * to a gateway user by the rule bearer tokens of that issuer follow.
 */
export class ExternalLogins {
  private readonly servers: AuthorizationServers;
  private readonly pending: PendingExternalLogins;
  private readonly keySets = new Map<string, JWTVerifyGetKey>();
  private readonly logins: Map<string, LoginIssuer>;

  constructor(private readonly deps: ExternalLoginsDeps) {
    this.servers = new AuthorizationServers(deps.fetch, deps.clock);
    this.pending = new PendingExternalLogins(deps.db);
    this.logins = new Map(deps.issuers.flatMap((item) => (item.login ? [[item.login.id, item as LoginIssuer]] : [])));
  }

  /** The logins the sign-in page offers, in configuration order. */
  options(): ExternalLoginOption[] {
    return [...this.logins.values()].map(({ login, issuer }) => ({
      id: login.id,
      name: login.name ?? new URL(issuer).host,
    }));
  }

  /** A new browser binding: the random value of the cookie the callback must come back with. */
  static newBrowserBinding(): string {
    return randomBytes(32).toString('base64url');
  }

  /** Starts login `loginId` for the pending sign-in `uid` from the browser bound by `browser`; answers the provider's authorization URL. */
  async start(uid: string, loginId: string, browser: string): Promise<string> {
    const item = this.loginOf(loginId);
    const as = await this.servers.resolve({ kind: 'issuer', issuer: item.issuer });
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    await this.pending.save(state, { uid, loginId, codeVerifier, nonce, browser: digest(browser) });
    const url = new URL(as.authorization_endpoint!);
    const params = {
      client_id: item.login.clientId,
      redirect_uri: this.deps.callbackUrl,
      response_type: 'code',
      scope: [...new Set(['openid', ...(item.login.scopes ?? DEFAULT_SCOPES)])].join(' '),
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    };
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    return url.href;
  }

  /**
   * Finishes a login from the callback's query and the browser's binding cookie: the pending
   * login is taken once by `state`, then the response's `iss` (RFC 9207), the code exchange and
   * the ID token are checked. Answers the pending sign-in and the gateway user; a person with no
   * gateway account is 403 (none is created). A refusal before the browser is known to be the
   * one that started the login is a plain AppError; any later one is an ExternalLoginFailed.
   */
  async finish(query: URLSearchParams, browser: string | null): Promise<FinishedExternalLogin> {
    const state = query.get('state');
    if (!state) throw refused('the callback carries no state');
    const pending = await this.pending.take(state);
    if (!pending)
      throw refused('this sign-in is unknown, expired or already finished; start again from your MCP client');
    if (browser === null || digest(browser) !== pending.browser)
      throw refused('the sign-in was started in another browser');
    try {
      return { uid: pending.uid, user: await this.userOf(pending, query, state) };
    } catch (err) {
      // A fault of this gateway (its database, say) stays a 500, not a refusal.
      if (!(err instanceof AppError)) throw err;
      throw new ExternalLoginFailed(pending.uid, failureOf(err), err);
    }
  }

  /** The gateway user the callback's person is, every check done; 403 for a person with no gateway account. */
  private async userOf(
    pending: PendingExternalLogin,
    query: URLSearchParams,
    state: string,
  ): Promise<FinishedExternalLogin['user']> {
    const item = this.loginOf(pending.loginId);
    const claims = await this.verifiedIdToken(item, query, state, pending).catch((err: unknown) =>
      Promise.reject(loginError(err)),
    );
    const user = await this.deps.auth.externalUser({
      issuer: item.issuer,
      sub: claims.sub,
      email: typeof claims.email === 'string' ? claims.email.toLowerCase() : null,
      emailVerified: claims.email_verified === true,
    });
    if (!user || user.email === null)
      throw new ForbiddenError(
        'No gateway account is linked to this identity; ask an administrator to create or link one',
        'EXTERNAL_USER_NOT_REGISTERED',
      );
    return { id: user.id, email: user.email, roles: user.roles, tenantId: user.tenantId };
  }

  private loginOf(loginId: string): LoginIssuer {
    const item = this.logins.get(loginId);
    if (!item) throw new NotFoundError('No external sign-in has this id', 'EXTERNAL_LOGIN_NOT_FOUND');
    return item;
  }

  /** The code exchanged and the ID token's claims, each step checked by oauth4webapi; the signature by jose. */
  private async verifiedIdToken(
    item: LoginIssuer,
    query: URLSearchParams,
    state: string,
    pending: { codeVerifier: string; nonce: string },
  ) {
    const as = await this.servers.resolve({ kind: 'issuer', issuer: item.issuer });
    const client: oauth.Client = { client_id: item.login.clientId };
    const options = {
      [oauth.customFetch]: this.deps.fetch,
      [oauth.allowInsecureRequests]: true,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    };
    const callback = oauth.validateAuthResponse(as, client, query, state);
    const auth = oauth.ClientSecretBasic(item.login.clientSecret);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      callback,
      this.deps.callbackUrl,
      pending.codeVerifier,
      options,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    // oauth4webapi checks the ID token's claims but not its signature: the provider's key set does.
    const { payload } = await jwtVerify(tokens.id_token!, this.keySetOf(item.login.id, as), {
      issuer: as.issuer,
      audience: item.login.clientId,
      algorithms: [...ASYMMETRIC_ALGORITHMS],
      currentDate: this.deps.clock.now(),
      requiredClaims: ['sub', 'exp'],
    });
    return payload as typeof payload & { sub: string };
  }

  private keySetOf(loginId: string, as: oauth.AuthorizationServer): JWTVerifyGetKey {
    let keys = this.keySets.get(loginId);
    if (!keys) {
      const url = typeof as.jwks_uri === 'string' && URL.canParse(as.jwks_uri) ? new URL(as.jwks_uri) : null;
      // Keys fetched in clear could be swapped on the way: HTTPS, or plain HTTP to this machine only.
      if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname))))
        throw refused('the identity provider publishes no HTTPS key set (jwks_uri)');
      keys = createRemoteJWKSet(url, { [customFetch]: this.deps.fetch, timeoutDuration: REQUEST_TIMEOUT_MS });
      this.keySets.set(loginId, keys);
    }
    return keys;
  }
}
