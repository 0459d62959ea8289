import type { Kysely } from 'kysely';
import {
  AppError,
  systemClock,
  type Clock,
  type Config,
  type EventBus,
  type Logger,
  type RequestHeaders,
} from '@agentgw/core';
import type { Database } from '@agentgw/db';
import { CredentialForms, type AuthMode } from './credential-forms.js';
import { ExternalIdentities } from './external-identities.js';
import { databaseAgentIdentities, IdentityCache, type AgentIdentities, type UserIdentity } from './identity-cache.js';
import { createJwtCodec, parseDuration, type JwtCodec, type UserTokenIdentity } from './jwt.js';
import { OAuthAccessTokens, oauthIssuerOf } from './oauth-access-tokens.js';
import type { OAuthPrincipal, Principal } from './principal.js';
import { tokenIssuing, type TokenIssuing } from './token-issuing.js';

export type { AuthMode };

export interface AuthService extends TokenIssuing {
  /** The caller's Principal; throws UnauthorizedError (401) or ForbiddenError (403). */
  authenticate(headers: RequestHeaders, mode: AuthMode): Promise<Principal>;
  /** An MCP client's OAuth access token, checked for the endpoint it calls (`audience`); throws 401 INVALID_TOKEN. */
  authenticateOAuth(token: string, audience: string): Promise<OAuthPrincipal>;
  /** The local user an external issuer's person is (linked subject or verified email), null if none: the rule bearer tokens follow. */
  externalUser(identity: ExternalPerson): Promise<UserIdentity | null>;
  /** Stops listening to cache-invalidation events. */
  close(): Promise<void>;
}

/** Who an external issuer says a person is (from a verified token of that issuer). */
export type ExternalPerson = Pick<UserTokenIdentity, 'issuer' | 'sub' | 'email' | 'emailVerified'>;

export interface CreateAuthOptions {
  config: Config;
  db: Kysely<Database>;
  bus: EventBus;
  /**
   * Where agents are read: the catalog's started reader (`ServiceDeps.catalog.agents`), so auth
   * and the services share one agent cache. Default: the database, uncached.
   */
  agents?: AgentIdentities;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Authentication composed of its parts: the identity cache (users, API keys, verified JWTs),
 * external identities (which local user a token speaks for), token issuing, and the credential
 * forms that turn request headers into a Principal. Agents come from `agents`.
 */
export async function createAuth({
  config,
  db,
  bus,
  agents,
  clock = systemClock,
  logger,
}: CreateAuthOptions): Promise<AuthService> {
  const identities = new IdentityCache(db, clock);
  const signer = createJwtCodec({ config, clock });
  const codec: JwtCodec = {
    sign: (...args) => signer.sign(...args),
    verify: (token, type, audience) =>
      identities.verifiedOnce(`${type}\u0000${audience ?? ''}`, token, () => signer.verify(token, type, audience)),
    verifyUserToken: (token) => identities.verifiedOnce('user', token, () => signer.verifyUserToken(token)),
  };
  const external = new ExternalIdentities({ db, codec, users: identities, clock });
  const tokens = tokenIssuing({ db, codec, loginTokenLifetime: parseDuration(config.JWT_EXPIRES_IN) });
  const forms = new CredentialForms({
    db,
    clock,
    logger,
    identities,
    agents: agents ?? databaseAgentIdentities(db),
    external,
    sessions: tokens,
  });
  const oauth = new OAuthAccessTokens({ db, clock, identities, issuer: oauthIssuerOf(config) });
  const unsubscribes = await Promise.all([identities.listen(bus), external.listen(bus), oauth.listen(bus)]);

  return {
    ...tokens,
    async authenticate(headers, mode) {
      try {
        return await forms.authenticate(headers, mode);
      } catch (err) {
        if (err instanceof AppError) logger?.debug({ code: err.code, mode }, 'authentication refused');
        throw err;
      }
    },
    async authenticateOAuth(token, audience) {
      try {
        return await oauth.authenticate(token, audience);
      } catch (err) {
        if (err instanceof AppError)
          logger?.debug({ code: err.code, reason: err.message }, 'OAuth access token refused');
        throw err;
      }
    },
    externalUser: (identity) => external.localUserOf(identity),
    async close() {
      await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe()));
    },
  };
}
