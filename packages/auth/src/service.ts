import { decodeJwt } from 'jose';
import type { Kysely } from 'kysely';
import {
  AppError,
  ForbiddenError,
  MemoryCache,
  systemClock,
  UnauthorizedError,
  type Clock,
  type Config,
  type EventBus,
  type Logger,
  type Unsubscribe,
} from '@agentgw/core';
import type { ApiKeyScope, Database, RoleName } from '@agentgw/db';
import { createJwtCodec, parseDuration, PASSWORD_STAMP_CLAIM, type JwtCodec, type UserTokenIdentity } from './jwt.js';
import { permissionsOf } from './permissions.js';
import type { Principal } from './principal.js';
import {
  issueSessionToken,
  verifySessionToken,
  type SessionClaims,
  type SessionTokenInput,
} from './session-token.js';
import { isVisibleTo } from './tenancy.js';
import { hashToken, sameHash, tokenKind } from './tokens.js';

export type AuthMode = 'jwt' | 'flexible';

export const CONFIRMATION_TOKEN_LIFETIME_SECONDS = 5 * 60;
export const SERVICE_TOKEN_LIFETIME_SECONDS = 60;

export interface ConfirmationClaims {
  confirmationId: string;
  /** User who confirmed. */
  userId: string | null;
}

export interface AuthService {
  /** Lifetime of login tokens in seconds (JWT_EXPIRES_IN). */
  readonly loginTokenLifetime: number;
  signUserToken(user: { id: string; email: string; roles: RoleName[]; tenantId: string | null }): Promise<string>;
  issueSessionToken(input: SessionTokenInput): Promise<{ token: string; expiresIn: number }>;
  verifySessionToken(token: string, presenter: { agentId: string }): Promise<SessionClaims>;
  signConfirmationToken(claims: ConfirmationClaims): Promise<{ token: string; expiresIn: number }>;
  verifyConfirmationToken(token: string): Promise<ConfirmationClaims>;
  /** Short-lived token one service presents to another (`audience` = the callee's name). */
  signServiceToken(service: string, audience: string): Promise<string>;
  verifyServiceToken(token: string, audience: string): Promise<{ service: string }>;
  /** The caller's Principal; throws UnauthorizedError (401) or ForbiddenError (403). */
  authenticate(headers: Headers, mode: AuthMode): Promise<Principal>;
  /** Stops listening to cache-invalidation events. */
  close(): Promise<void>;
}

export interface CreateAuthOptions {
  config: Config;
  db: Kysely<Database>;
  bus: EventBus;
  clock?: Clock;
  logger?: Logger;
}

interface UserIdentity {
  id: string;
  email: string | null;
  roles: RoleName[];
  tenantId: string | null;
  /** `password_changed_at` in ms (0 = never): our login tokens must carry the current one. */
  passwordStamp: number;
}

interface AgentIdentity {
  id: string;
  tenantId: string | null;
  isActive: boolean;
  runtimeTokenHash: string;
}

interface ApiKeyIdentity {
  id: string;
  keyHash: string;
  scopes: ApiKeyScope[];
  tenantId: string | null;
  revoked: boolean;
  /** Who created the key (`api_keys.user_id`); the key never acts beyond them. */
  creatorId: string | null;
}

/**
 * Identity lookups are cached so the hot path does no query; events from any replica drop
 * entries at once, and the TTL bounds staleness should an event be missed.
 */
const CACHE = { ttlMs: 60_000, max: 10_000 } as const;

/**
 * A verified JWT's result is kept per token (keyed by its hash) until shortly before its `exp`,
 * and at most `ttlMs`, so a key set change of an external issuer is seen within minutes. What
 * the token names (user, password stamp, agent) is still checked per request against the
 * identity caches, so revocation (TOKEN_REVOKED, disabled agents) is not delayed.
 */
const VERIFIED_TOKENS = { ttlMs: 5 * 60_000, max: 10_000, expiryMarginMs: 5_000 } as const;

/** An API key's `last_used_at` is written at most this often per key and process. */
export const API_KEY_USE_RECORD_INTERVAL_MS = 60_000;

const unauthorized = (message: string, code = 'UNAUTHORIZED') => new UnauthorizedError(message, code);

function bearerToken(header: string | null): string | null {
  if (header === null) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized('Authorization must be a Bearer token');
  return match[1]!;
}

function principalOf(
  user: UserIdentity,
  via: Principal['via'],
  extra: Partial<Pick<Principal, 'agentId' | 'apiKey'>> = {},
): Principal {
  return {
    via,
    userId: user.id,
    email: user.email,
    roles: user.roles,
    tenantId: user.tenantId,
    agentId: extra.agentId ?? null,
    endUserId: user.id,
    apiKey: extra.apiKey ?? null,
    permissions: permissionsOf(user.roles),
  };
}

/**
 * The kill switch, the one place it is decided: a disabled agent is refused with 403
 * AGENT_DISABLED. Auth applies it to runtime and session tokens and X-Agent-Id; the catalog
 * (`@agentgw/catalog`, which depends on auth) applies it to agent lookups by id.
 */
export function assertAgentActive(agent: { isActive: boolean }): void {
  if (!agent.isActive) throw new ForbiddenError('Agent is disabled', 'AGENT_DISABLED');
}

export async function createAuth({ config, db, bus, clock = systemClock, logger }: CreateAuthOptions): Promise<AuthService> {
  const signer: JwtCodec = createJwtCodec({ config, clock });
  const verifiedTokens = new MemoryCache<{ result: unknown; usableUntil: number }>({ ...VERIFIED_TOKENS, clock });

  /** `verify`'s result for this token, from the cache while the token has time left; failures are never kept. */
  async function verifiedOnce<T>(kind: string, token: string, verify: () => Promise<T>): Promise<T> {
    const key = `${kind}\u0000${hashToken(token)}`;
    const now = clock.now().getTime();
    const hit = verifiedTokens.get(key);
    if (hit && hit.usableUntil > now) return hit.result as T;
    const result = await verify();
    // Verification required `exp`, so the token decodes and carries it.
    const exp = decodeJwt(token).exp;
    const usableUntil = typeof exp === 'number' ? exp * 1000 - VERIFIED_TOKENS.expiryMarginMs : 0;
    if (usableUntil > now) verifiedTokens.set(key, { result, usableUntil });
    return result;
  }

  const codec: JwtCodec = {
    sign: (...args) => signer.sign(...args),
    verify: (token, type, audience) => verifiedOnce(`${type}\u0000${audience ?? ''}`, token, () => signer.verify(token, type, audience)),
    verifyUserToken: (token) => verifiedOnce('user', token, () => signer.verifyUserToken(token)),
  };
  const loginTokenLifetime = parseDuration(config.JWT_EXPIRES_IN);

  const cache = <V>() => new MemoryCache<V>({ ...CACHE, clock });
  const usersById = cache<UserIdentity | null>();
  const usersByEmail = cache<UserIdentity | null>();
  // (issuer, subject) → linked local user id; dropped with any user change (links die with users).
  const externalLinks = cache<string | null>();
  const agentsById = cache<AgentIdentity | null>();
  const apiKeysById = cache<ApiKeyIdentity | null>();
  // Hash → id keeps hits only, so presenting junk tokens cannot flush the cache.
  const agentIdsByTokenHash = cache<string>();
  const apiKeyIdsByHash = cache<string>();

  const unsubscribes: Unsubscribe[] = await Promise.all([
    usersById.invalidateOn(bus, 'user.changed', ({ userId }) => userId),
    usersByEmail.invalidateOn(bus, 'user.changed'),
    externalLinks.invalidateOn(bus, 'user.changed'),
    agentsById.invalidateOn(bus, 'agent.changed', ({ agentId }) => agentId),
    apiKeysById.invalidateOn(bus, 'apikey.changed', ({ keyId }) => keyId),
    // Not needed for correctness (identities are re-checked per request); keeps the cache no older than them.
    verifiedTokens.invalidateOn(bus, 'user.changed'),
    verifiedTokens.invalidateOn(bus, 'agent.changed'),
    verifiedTokens.invalidateOn(bus, 'apikey.changed'),
  ]);

  const userQuery = () => db.selectFrom('users').select(['id', 'email', 'roles', 'tenant_id', 'password_changed_at']);
  const toUser = (
    row: { id: string; email: string; roles: RoleName[]; tenant_id: string | null; password_changed_at: Date | null } | undefined,
  ): UserIdentity | null =>
    row
      ? { id: row.id, email: row.email, roles: row.roles, tenantId: row.tenant_id, passwordStamp: row.password_changed_at?.getTime() ?? 0 }
      : null;

  const userById = (id: string) =>
    usersById.getOrLoad(id, async () => toUser(await userQuery().where('id', '=', id).executeTakeFirst()));
  const userByEmail = (email: string) =>
    usersByEmail.getOrLoad(email, async () =>
      toUser(await userQuery().where((eb) => eb(eb.fn('lower', ['email']), '=', email)).executeTakeFirst()),
    );

  const agentById = (id: string) =>
    agentsById.getOrLoad(id, async () => {
      const row = await db
        .selectFrom('agents')
        .select(['id', 'tenant_id', 'is_active', 'runtime_token_hash'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row
        ? { id: row.id, tenantId: row.tenant_id, isActive: row.is_active, runtimeTokenHash: row.runtime_token_hash }
        : null;
    });

  const apiKeyById = (id: string) =>
    apiKeysById.getOrLoad(id, async () => {
      const row = await db
        .selectFrom('api_keys')
        .select(['id', 'key_hash', 'scopes', 'tenant_id', 'revoked_at', 'user_id'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row
        ? {
            id: row.id,
            keyHash: row.key_hash,
            scopes: row.scopes,
            tenantId: row.tenant_id,
            revoked: row.revoked_at !== null,
            creatorId: row.user_id,
          }
        : null;
    });

  // Key id → when this process last wrote its use. Only valid keys get here, so it stays small;
  // stale entries are swept should it ever grow past the cache bound.
  const apiKeyUseRecorded = new Map<string, number>();

  /** Records an API key's use without holding up the request: throttled, fire-and-forget, errors only logged. */
  function recordApiKeyUse(id: string): void {
    const now = clock.now().getTime();
    const last = apiKeyUseRecorded.get(id);
    if (last !== undefined && now - last < API_KEY_USE_RECORD_INTERVAL_MS) return;
    if (apiKeyUseRecorded.size >= CACHE.max) {
      for (const [key, at] of apiKeyUseRecorded) if (now - at >= API_KEY_USE_RECORD_INTERVAL_MS) apiKeyUseRecorded.delete(key);
    }
    apiKeyUseRecorded.set(id, now);
    db.updateTable('api_keys')
      .set({ last_used_at: new Date(now) })
      .where('id', '=', id)
      .execute()
      .catch((err: unknown) =>
        logger?.warn({ keyId: id, reason: err instanceof Error ? err.message : String(err) }, 'could not record API key use'),
      );
  }

  async function idByHash(ids: MemoryCache<string>, hash: string, find: () => Promise<string | undefined>) {
    const cached = ids.get(hash);
    if (cached !== undefined) return cached;
    const id = await find();
    if (id !== undefined) ids.set(hash, id);
    return id ?? null;
  }

  /**
   * Hash → id entries may outlive a rotation or revocation; the row is re-read through the
   * id cache (dropped by events) and its stored hash compared in constant time, so a stale
   * entry can never let an old secret in.
   */
  async function agentByRuntimeToken(token: string): Promise<AgentIdentity> {
    const hash = hashToken(token);
    const id = await idByHash(agentIdsByTokenHash, hash, async () =>
      (await db.selectFrom('agents').select('id').where('runtime_token_hash', '=', hash).executeTakeFirst())?.id,
    );
    const agent = id === null ? null : await agentById(id);
    if (!agent || !sameHash(agent.runtimeTokenHash, hash)) throw unauthorized('Invalid runtime token', 'INVALID_TOKEN');
    return agent;
  }

  async function apiKeyFrom(raw: string): Promise<ApiKeyIdentity & { creator: UserIdentity }> {
    const invalid = () => unauthorized('Invalid API key', 'INVALID_API_KEY');
    if (tokenKind(raw) !== 'api_key') throw invalid();
    const hash = hashToken(raw);
    const id = await idByHash(apiKeyIdsByHash, hash, async () =>
      (await db.selectFrom('api_keys').select('id').where('key_hash', '=', hash).executeTakeFirst())?.id,
    );
    const key = id === null ? null : await apiKeyById(id);
    if (!key || key.revoked || !sameHash(key.keyHash, hash)) throw invalid();
    const creator = key.creatorId === null ? null : await userById(key.creatorId);
    if (!creator || !canStillIssue(creator, key)) throw invalid();
    recordApiKeyUse(key.id);
    return { ...key, creator };
  }

  /**
   * A key is only as good as its creator's current standing (users are cached and dropped by
   * `user.changed`): an admin's key lives while they are admin; anyone else's needs them to
   * still hold `apikey:manage` in the key's tenant, so legacy global keys of non-admins die too.
   */
  function canStillIssue(creator: UserIdentity, key: ApiKeyIdentity): boolean {
    if (creator.roles.includes('admin')) return true;
    return permissionsOf(creator.roles).has('apikey:manage') && key.tenantId !== null && key.tenantId === creator.tenantId;
  }

  /**
   * A non-admin's key acts only for users who hold no more than its creator: every permission
   * of the user's roles must be one of the creator's (tenant_admin covers agent_creator).
   */
  function assertKeyMayActFor(creator: UserIdentity, user: UserIdentity): void {
    if (creator.roles.includes('admin')) return;
    const allowed = permissionsOf(creator.roles);
    if ([...permissionsOf(user.roles)].some((permission) => !allowed.has(permission))) {
      throw new ForbiddenError("This API key cannot act for a user more privileged than the key's creator", 'KEY_CANNOT_ACT_FOR_USER');
    }
  }

  /** The local user an external identity was linked to, if any. */
  const linkedUserId = (issuer: string, subject: string) =>
    externalLinks.getOrLoad(`${issuer}\u0000${subject}`, async () => {
      const row = await db
        .selectFrom('external_identities')
        .select('user_id')
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .executeTakeFirst();
      return row?.user_id ?? null;
    });

  async function linkExternalIdentity(identity: UserTokenIdentity, userId: string): Promise<void> {
    await db
      .insertInto('external_identities')
      .values({ issuer: identity.issuer, subject: identity.sub, user_id: userId })
      .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
      .execute();
    externalLinks.set(`${identity.issuer}\u0000${identity.sub}`, userId);
  }

  /**
   * The user a login token speaks for.
   * - Our own tokens must name a live user and carry its current password stamp, so a password
   *   change ends every login issued before it (TOKEN_REVOKED).
   * - JWT_PUBLIC_KEY tokens carry our issuer, so their subject is a local user id.
   * - Otherwise (and for external issuers always) the user linked to `(issuer, subject)`; failing
   *   that, the local user with the token's email, but only when the issuer says
   *   `email_verified: true` — the link is then recorded so later tokens map by subject.
   * A caller unknown here gets a principal with no roles and an id in its issuer's namespace
   * (`external:<issuer>:<sub>`), so a `sub` equal to a local user's id never becomes that user.
   */
  async function userFromToken(token: string): Promise<UserIdentity> {
    const identity = await codec.verifyUserToken(token);
    if (identity.source === 'gateway') {
      const user = await userById(identity.sub);
      if (!user) throw unauthorized('User no longer exists');
      if (identity.passwordStamp !== user.passwordStamp) throw unauthorized('The password changed since this token was issued; sign in again', 'TOKEN_REVOKED');
      return user;
    }
    if (identity.source === 'public_key') {
      const user = await userById(identity.sub);
      if (user) return user;
    }
    const linked = await linkedUserId(identity.issuer, identity.sub);
    const linkedUser = linked === null ? null : await userById(linked);
    if (linkedUser) return linkedUser;
    if (identity.email && identity.emailVerified) {
      const byEmail = await userByEmail(identity.email);
      if (byEmail) {
        await linkExternalIdentity(identity, byEmail.id);
        return byEmail;
      }
    }
    const id = identity.source === 'public_key' ? identity.sub : `external:${identity.issuer}:${identity.sub}`;
    return { id, email: identity.email, roles: [], tenantId: null, passwordStamp: 0 };
  }

  /** Optional X-Agent-Id beside an API key: the agent must exist, be visible and be active. */
  async function withAgent(principal: Principal, agentId: string | null): Promise<Principal> {
    if (agentId === null) return principal;
    const agent = await agentById(agentId);
    if (!agent) throw unauthorized('Unknown agent');
    if (!isVisibleTo(principal, agent.tenantId)) throw new ForbiddenError('Agent belongs to another tenant');
    assertAgentActive(agent);
    return { ...principal, agentId: agent.id };
  }

  async function flexible(headers: Headers, bearer: string | null): Promise<Principal> {
    const sessionToken = headers.get('x-gateway-session-token');
    const agentHeader = headers.get('x-agent-id');
    const userHeader = headers.get('x-user-id');
    const apiKeyHeader = headers.get('x-api-key');
    const bearerKind = bearer === null ? null : tokenKind(bearer);
    if (bearerKind === 'api_key') throw unauthorized('Send API keys in X-Api-Key');
    const runtimeToken = bearerKind === 'runtime' ? bearer : null;
    const userJwt = bearer !== null && bearerKind === null ? bearer : null;
    // A presented API key is always checked, whatever else comes with it.
    const apiKey = apiKeyHeader === null ? null : await apiKeyFrom(apiKeyHeader);
    const keyRef = apiKey && { id: apiKey.id, scopes: apiKey.scopes };
    const assertKeyTenant = (tenantId: string | null) => {
      if (apiKey && apiKey.tenantId !== null && apiKey.tenantId !== tenantId) {
        throw new ForbiddenError("User is not in the API key's tenant", 'TENANT_FORBIDDEN');
      }
    };

    if (sessionToken !== null) {
      if (userJwt !== null) throw unauthorized('Send either a user JWT or a session token, not both');
      const tokenAgent = runtimeToken === null ? null : await agentByRuntimeToken(runtimeToken);
      if (tokenAgent && agentHeader !== null && agentHeader !== tokenAgent.id) {
        throw unauthorized('X-Agent-Id does not match the runtime token');
      }
      const agentId = tokenAgent?.id ?? agentHeader;
      if (agentId === null) throw unauthorized('A session token needs X-Agent-Id or the agent runtime token');
      // The signature is checked before X-Agent-Id costs a lookup.
      const claims = await verifySessionToken(codec, sessionToken, { agentId });
      const agent = tokenAgent ?? (await agentById(agentId));
      if (!agent) throw unauthorized('Unknown agent');
      assertAgentActive(agent);
      assertKeyTenant(claims.tenantId);
      const principal: Principal = {
        via: 'session_token',
        userId: claims.endUserId,
        email: claims.email,
        roles: claims.roles,
        tenantId: claims.tenantId,
        agentId: agent.id,
        endUserId: claims.endUserId,
        apiKey: keyRef,
        permissions: permissionsOf(claims.roles),
      };
      // A session only ever lends the end user to an agent that user may see (tenancy rule).
      if (!isVisibleTo(principal, agent.tenantId)) throw new ForbiddenError('Agent belongs to another tenant');
      return principal;
    }

    if (apiKey && keyRef) {
      let user: UserIdentity | null;
      if (userJwt !== null) {
        user = await userFromToken(userJwt);
        if (userHeader !== null && userHeader !== user.id) throw unauthorized('X-User-Id does not match the JWT');
      } else if (userHeader !== null) {
        user = await userById(userHeader);
        if (!user) throw unauthorized('Unknown user');
      } else {
        throw unauthorized('An API key needs X-User-Id or a user JWT');
      }
      assertKeyTenant(user.tenantId);
      assertKeyMayActFor(apiKey.creator, user);
      return withAgent(principalOf(user, 'api_key', { apiKey: keyRef }), agentHeader);
    }

    if (runtimeToken !== null) {
      const agent = await agentByRuntimeToken(runtimeToken);
      if (agentHeader !== null && agentHeader !== agent.id) throw unauthorized('X-Agent-Id does not match the runtime token');
      assertAgentActive(agent);
      return {
        via: 'runtime_token',
        userId: null,
        email: null,
        roles: [],
        tenantId: agent.tenantId,
        agentId: agent.id,
        endUserId: null,
        apiKey: null,
        permissions: permissionsOf([]),
      };
    }

    if (userJwt !== null) {
      const user = await userFromToken(userJwt);
      // Naming an agent would borrow its rules: only the agent's own credentials (an API key the
      // runtime holds, a session token issued to it) may do that, never a user's login alone.
      if (agentHeader !== null) {
        throw new ForbiddenError(
          'X-Agent-Id needs an API key (X-Api-Key) or a session token (X-Gateway-Session-Token); a user JWT alone cannot act as an agent',
          'AGENT_ID_NOT_ALLOWED',
        );
      }
      return principalOf(user, 'jwt');
    }
    throw unauthorized('Authentication required');
  }

  async function authenticate(headers: Headers, mode: AuthMode): Promise<Principal> {
    const bearer = bearerToken(headers.get('authorization'));
    if (mode === 'flexible') return flexible(headers, bearer);
    if (bearer === null || tokenKind(bearer) !== null) throw unauthorized('A user JWT is required');
    return principalOf(await userFromToken(bearer), 'jwt');
  }

  return {
    loginTokenLifetime,

    // The password stamp is read fresh (not cached): a token signed right after a change must carry the new one.
    async signUserToken(user) {
      const row = await db.selectFrom('users').select('password_changed_at').where('id', '=', user.id).executeTakeFirst();
      const stamp = row?.password_changed_at?.getTime() ?? 0;
      return codec.sign(
        'login',
        { sub: user.id, email: user.email, roles: user.roles, tenantId: user.tenantId, [PASSWORD_STAMP_CLAIM]: stamp },
        loginTokenLifetime,
      );
    },

    issueSessionToken: (input) => issueSessionToken(codec, input),
    verifySessionToken: (token, presenter) => verifySessionToken(codec, token, presenter),

    async signConfirmationToken({ confirmationId, userId }) {
      const token = await codec.sign('confirmation', { sub: confirmationId, userId }, CONFIRMATION_TOKEN_LIFETIME_SECONDS);
      return { token, expiresIn: CONFIRMATION_TOKEN_LIFETIME_SECONDS };
    },
    async verifyConfirmationToken(token) {
      const claims = await codec.verify(token, 'confirmation');
      const userId = claims.userId;
      if (userId !== null && typeof userId !== 'string') throw unauthorized('Invalid confirmation token', 'INVALID_TOKEN');
      return { confirmationId: claims.sub, userId };
    },

    signServiceToken: (service, audience) => codec.sign('service', { sub: service }, SERVICE_TOKEN_LIFETIME_SECONDS, audience),
    async verifyServiceToken(token, audience) {
      const claims = await codec.verify(token, 'service', audience);
      return { service: claims.sub };
    },

    async authenticate(headers, mode) {
      try {
        return await authenticate(headers, mode);
      } catch (err) {
        if (err instanceof AppError) logger?.debug({ code: err.code, mode }, 'authentication refused');
        throw err;
      }
    },

    async close() {
      await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe()));
    },
  };
}
