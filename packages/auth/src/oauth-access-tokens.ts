import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify, type JSONWebKeySet, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import { MemoryCache, UnauthorizedError, type Clock, type EventBus } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { IdentityCache } from './identity-cache.js';
import { permissionsOf } from './permissions.js';
import type { OAuthPrincipal } from './principal.js';

/** The JWT `typ` of an OAuth access token (RFC 9068); oidc-provider writes it on every JWT access token. */
export const OAUTH_ACCESS_TOKEN_TYP = 'at+jwt';

/** The one algorithm the authorization server signs access tokens with (ES256, P-256 keys kept in the database). */
export const OAUTH_SIGNING_ALG = 'ES256';

/** How often, at most, an unknown key id sends the verifier back to the database for the key set. */
const KEY_RELOAD_INTERVAL_MS = 30_000;

/** How long a revoked grant is remembered: longer than any access token lives (tokens of a revoked grant die with it). */
const REVOKED_GRANT_MEMORY_MS = 24 * 60 * 60_000;
/** Bound on remembered revocations per process; the oldest are forgotten first. */
const MAX_REVOKED_GRANTS = 100_000;
/**
 * A grant seen alive in the database is trusted this long without another read (revocations
 * reach a running replica over the bus; this only covers one that started after a revocation).
 */
const LIVE_GRANT_MEMORY_MS = 5 * 60_000;
const MAX_LIVE_GRANTS = 100_000;
/** A user's client-to-agent binding is re-read after this long, or at once when an admin changes one (bus). */
const BINDING_MEMORY_MS = 60_000;
const MAX_BINDINGS = 100_000;

/** The binding that applies to a user's client: the client's own, else the user's `*` (all clients) one. */
export const ALL_CLIENTS = '*';

/** The authorization server's issuer: GATEWAY_PUBLIC_URL without a trailing slash; undefined (OAuth off) without one. */
export function oauthIssuerOf(config: { GATEWAY_PUBLIC_URL?: string | undefined }): string | undefined {
  return config.GATEWAY_PUBLIC_URL?.replace(/\/+$/, '');
}

/** Whether a bearer token looks like an OAuth access token (a JWT whose header says `typ: at+jwt`), without verifying it. */
export function isOAuthAccessToken(token: string): boolean {
  // Every JWT's header starts `{"` (base64url `eyJ`); the gateway's own tokens (`art_`, `gk_`, …)
  // are refused here without the decoder's thrown error, which cost a fifth of a plain tools/call.
  if (!token.startsWith('eyJ')) return false;
  try {
    return decodeProtectedHeader(token).typ?.toLowerCase() === OAUTH_ACCESS_TOKEN_TYP;
  } catch {
    return false;
  }
}

/** The public keys the authorization server signs with, as stored in `oauth_signing_keys`. */
export async function storedOAuthPublicKeys(db: Kysely<Database>): Promise<JWK[]> {
  const rows = await db.selectFrom('oauth_signing_keys').select(['public_jwk']).orderBy('created_at').execute();
  return rows.map((row) => row.public_jwk as JWK);
}

export interface OAuthAccessTokensDeps {
  db: Kysely<Database>;
  clock: Clock;
  identities: Pick<IdentityCache, 'userById'>;
  /** The authorization server's issuer (GATEWAY_PUBLIC_URL); undefined: OAuth is off and every such token is refused. */
  issuer: string | undefined;
}

const invalidToken = (message: string) => new UnauthorizedError(message, 'INVALID_TOKEN');

/**
 * Verifies the access tokens the gateway's authorization server issues to MCP clients: the
 * signature against the keys in the database (cached; reloaded at most every 30 s when a token
 * names an unknown key), issuer, expiry, `typ`, and the audience against the endpoint called
 * (RFC 8707). No database read per call: users come from the identity cache, revoked grants
 * from the bus (`oauth.grant_revoked`); a grant is read once per process (then every five
 * minutes) so a replica started after a revocation refuses its tokens too.
 */
export class OAuthAccessTokens {
  private keySet: { jwks: ReturnType<typeof createLocalJWKSet>; loadedAt: number } | null = null;
  private readonly revokedGrants = new Map<string, number>();
  private readonly liveGrants: MemoryCache<boolean>;
  private readonly boundAgents: MemoryCache<string | null>;

  constructor(private readonly deps: OAuthAccessTokensDeps) {
    this.liveGrants = new MemoryCache<boolean>({
      max: MAX_LIVE_GRANTS,
      ttlMs: LIVE_GRANT_MEMORY_MS,
      clock: deps.clock,
    });
    this.boundAgents = new MemoryCache<string | null>({
      max: MAX_BINDINGS,
      ttlMs: BINDING_MEMORY_MS,
      clock: deps.clock,
    });
  }

  /** The principal an access token speaks for when it was issued for `audience`; 401 INVALID_TOKEN otherwise. */
  async authenticate(token: string, audience: string): Promise<OAuthPrincipal> {
    const issuer = this.deps.issuer;
    if (issuer === undefined) throw invalidToken('OAuth access tokens are not accepted: GATEWAY_PUBLIC_URL is not set');
    const payload = await this.verify(token, issuer, audience);
    const userId = typeof payload.sub === 'string' ? payload.sub : null;
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : null;
    const grantId = typeof payload.gid === 'string' ? payload.gid : null;
    if (userId === null || clientId === null || grantId === null)
      throw invalidToken('Access token lacks sub, client_id or gid');
    if (this.isRevoked(grantId) || !(await this.grantIsLive(grantId))) throw invalidToken('Access token was revoked');
    const user = await this.deps.identities.userById(userId);
    if (!user) throw invalidToken('Unknown user');
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
    return {
      via: 'oauth',
      userId: user.id,
      endUserId: user.id,
      email: user.email,
      roles: user.roles,
      tenantId: user.tenantId,
      permissions: permissionsOf(user.roles),
      agentId: await this.boundAgent(user.id, clientId),
      apiKey: null,
      oauth: { clientId, audience, scopes, grantId },
    };
  }

  /** Remembers a revoked grant (its tokens are refused from now on). */
  revokeGrant(grantId: string): void {
    const now = this.deps.clock.now().getTime();
    if (this.revokedGrants.size >= MAX_REVOKED_GRANTS) {
      for (const [id, at] of this.revokedGrants) {
        if (now - at < REVOKED_GRANT_MEMORY_MS && this.revokedGrants.size < MAX_REVOKED_GRANTS) break;
        this.revokedGrants.delete(id);
      }
    }
    this.revokedGrants.set(grantId, now);
    this.liveGrants.delete(grantId);
  }

  /** Listens for revocations and binding changes from every replica; answers the unsubscribe. */
  async listen(bus: EventBus): Promise<() => Promise<void>> {
    const revoked = await bus.subscribe('oauth.grant_revoked', ({ grantId }) => this.revokeGrant(grantId));
    const bindings = await bus.subscribe('oauth.client_agents_changed', () => this.boundAgents.clear());
    return async () => {
      await revoked();
      await bindings();
    };
  }

  /** The agent `clientId` of `userId` is bound to (its own binding first, then the user's all-clients one), or null. */
  private boundAgent(userId: string, clientId: string): Promise<string | null> {
    return this.boundAgents.getOrLoad(`${userId}\n${clientId}`, async () => {
      const rows = await this.deps.db
        .selectFrom('oauth_client_agents')
        .select(['client_id', 'agent_id'])
        .where('user_id', '=', userId)
        .where('client_id', 'in', [clientId, ALL_CLIENTS])
        .execute();
      return (
        (rows.find((r) => r.client_id === clientId) ?? rows.find((r) => r.client_id === ALL_CLIENTS))?.agent_id ?? null
      );
    });
  }

  /** Whether the grant's row still exists (revoking deletes it): read once per grant and process, then cached. */
  private grantIsLive(grantId: string): Promise<boolean> {
    return this.liveGrants.getOrLoad(grantId, async () => {
      const row = await this.deps.db
        .selectFrom('oauth_models')
        .select(['id'])
        .where('model', '=', 'Grant')
        .where('id', '=', grantId)
        .executeTakeFirst();
      return row !== undefined;
    });
  }

  private isRevoked(grantId: string): boolean {
    const at = this.revokedGrants.get(grantId);
    return at !== undefined && this.deps.clock.now().getTime() - at < REVOKED_GRANT_MEMORY_MS;
  }

  private async verify(token: string, issuer: string, audience: string) {
    const options = {
      issuer,
      audience,
      typ: OAUTH_ACCESS_TOKEN_TYP,
      algorithms: [OAUTH_SIGNING_ALG],
      currentDate: this.deps.clock.now(),
    };
    try {
      return (await jwtVerify(token, await this.keys(false), options)).payload;
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) {
        try {
          return (await jwtVerify(token, await this.keys(true), options)).payload;
        } catch (again) {
          throw refusal(again);
        }
      }
      throw refusal(err);
    }
  }

  private async keys(reload: boolean): Promise<ReturnType<typeof createLocalJWKSet>> {
    const now = this.deps.clock.now().getTime();
    if (this.keySet && !(reload && now - this.keySet.loadedAt >= KEY_RELOAD_INTERVAL_MS)) return this.keySet.jwks;
    const set: JSONWebKeySet = { keys: await storedOAuthPublicKeys(this.deps.db) };
    this.keySet = { jwks: createLocalJWKSet(set), loadedAt: now };
    return this.keySet.jwks;
  }
}

/** Why a token failed, in words that name no part of it. */
function refusal(err: unknown): UnauthorizedError {
  if (err instanceof errors.JWTExpired) return invalidToken('Access token expired');
  if (err instanceof errors.JWTClaimValidationFailed && err.claim === 'aud')
    return invalidToken('Access token was issued for another resource');
  return invalidToken('Invalid access token');
}
