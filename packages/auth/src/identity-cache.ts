import { decodeJwt } from 'jose';
import type { Kysely } from 'kysely';
import { MemoryCache, type Clock, type EventBus, type Unsubscribe } from '@agentgw/core';
import type { ApiKeyScope, Database, RoleName } from '@agentgw/db';
import { hashToken } from './tokens.js';

/** A local user as authentication needs it. */
export interface UserIdentity {
  id: string;
  email: string | null;
  roles: RoleName[];
  tenantId: string | null;
  /** `password_changed_at` in ms (0 = never): our login tokens must carry the current one. */
  passwordStamp: number;
}

/** An API key as authentication needs it. */
export interface ApiKeyIdentity {
  id: string;
  keyHash: string;
  scopes: ApiKeyScope[];
  tenantId: string | null;
  revoked: boolean;
  /** Who created the key (`api_keys.user_id`); the key never acts beyond them. */
  creatorId: string | null;
}

/** An agent as authentication checks it; the catalog's reader answers with richer records. */
export interface AgentIdentity {
  id: string;
  tenantId: string | null;
  isActive: boolean;
  runtimeTokenHash: string;
}

/**
 * Where auth reads agents. Services pass the catalog's hot-path reader (`ServiceDeps.catalog.agents`,
 * cached and dropped on `agent.changed`), so the kill switch has one copy per process.
 */
export interface AgentIdentities {
  get(agentId: string): Promise<AgentIdentity | null>;
  /** The agent a runtime-token hash maps to (maybe stale: the caller compares `runtimeTokenHash`). */
  byTokenHash(hash: string): Promise<AgentIdentity | null>;
}

/** Agents straight from the database, uncached: for an auth built without the catalog (tools, tests). */
export function databaseAgentIdentities(db: Kysely<Database>): AgentIdentities {
  const query = () => db.selectFrom('agents').select(['id', 'tenant_id', 'is_active', 'runtime_token_hash']);
  const toIdentity = (
    row: { id: string; tenant_id: string | null; is_active: boolean; runtime_token_hash: string } | undefined,
  ) =>
    row
      ? { id: row.id, tenantId: row.tenant_id, isActive: row.is_active, runtimeTokenHash: row.runtime_token_hash }
      : null;
  return {
    get: async (agentId) => toIdentity(await query().where('id', '=', agentId).executeTakeFirst()),
    byTokenHash: async (hash) => toIdentity(await query().where('runtime_token_hash', '=', hash).executeTakeFirst()),
  };
}

/**
 * Identity lookups are cached so the hot path does no query; events from any replica drop
 * entries at once, and the TTL bounds staleness should an event be missed.
 */
export const IDENTITY_CACHE = { ttlMs: 60_000, max: 10_000 } as const;

/**
 * A verified JWT's result is kept per token (keyed by its hash) until shortly before its `exp`,
 * and at most `ttlMs`, so a key set change of an external issuer is seen within minutes. What
 * the token names (user, password stamp, agent) is still checked per request against the
 * identity caches, so revocation (TOKEN_REVOKED, disabled agents) is not delayed.
 */
const VERIFIED_TOKENS = { ttlMs: 5 * 60_000, max: 10_000, expiryMarginMs: 5_000 } as const;

type UserRow = {
  id: string;
  email: string;
  roles: RoleName[];
  tenant_id: string | null;
  password_changed_at: Date | null;
};

/**
 * Auth's own caches: users (by id and email), API keys (by id, and hash → id) and verified JWTs,
 * dropped by `user.changed` / `apikey.changed` (and `agent.changed` for tokens). Agents are not
 * here: they are read through `AgentIdentities`.
 */
export class IdentityCache {
  private readonly usersById: MemoryCache<UserIdentity | null>;
  private readonly usersByEmail: MemoryCache<UserIdentity | null>;
  private readonly apiKeysById: MemoryCache<ApiKeyIdentity | null>;
  // Hash → id keeps hits only, so presenting junk keys cannot flush the cache.
  private readonly apiKeyIdsByHash: MemoryCache<string>;
  private readonly verifiedTokens: MemoryCache<{ result: unknown; usableUntil: number }>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {
    const cache = <V>() => new MemoryCache<V>({ ...IDENTITY_CACHE, clock });
    this.usersById = cache();
    this.usersByEmail = cache();
    this.apiKeysById = cache();
    this.apiKeyIdsByHash = cache();
    this.verifiedTokens = new MemoryCache({ ...VERIFIED_TOKENS, clock });
  }

  /** Drops entries on the bus events of every replica; the returned function stops listening. */
  async listen(bus: EventBus): Promise<Unsubscribe> {
    const unsubscribes = await Promise.all([
      this.usersById.invalidateOn(bus, 'user.changed', ({ userId }) => userId),
      this.usersByEmail.invalidateOn(bus, 'user.changed'),
      this.apiKeysById.invalidateOn(bus, 'apikey.changed', ({ keyId }) => keyId),
      // Not needed for correctness (identities are re-checked per request); keeps the cache no older than them.
      this.verifiedTokens.invalidateOn(bus, 'user.changed'),
      this.verifiedTokens.invalidateOn(bus, 'agent.changed'),
      this.verifiedTokens.invalidateOn(bus, 'apikey.changed'),
    ]);
    return async () => {
      await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe()));
    };
  }

  userById(id: string): Promise<UserIdentity | null> {
    return this.usersById.getOrLoad(id, async () =>
      toUser(await this.userQuery().where('id', '=', id).executeTakeFirst()),
    );
  }

  /** By email, case-insensitively (pass it lower-cased). */
  userByEmail(email: string): Promise<UserIdentity | null> {
    return this.usersByEmail.getOrLoad(email, async () =>
      toUser(
        await this.userQuery()
          .where((eb) => eb(eb.fn('lower', ['email']), '=', email))
          .executeTakeFirst(),
      ),
    );
  }

  /**
   * The key a hash maps to, or null. The hash → id entry may outlive a revocation or rotation:
   * the row is re-read through the id cache (dropped by events) and the caller compares hashes.
   */
  async apiKeyByHash(hash: string): Promise<ApiKeyIdentity | null> {
    let id = this.apiKeyIdsByHash.get(hash);
    if (id === undefined) {
      id = (await this.db.selectFrom('api_keys').select('id').where('key_hash', '=', hash).executeTakeFirst())?.id;
      if (id === undefined) return null;
      this.apiKeyIdsByHash.set(hash, id);
    }
    return this.apiKeyById(id);
  }

  /** `verify`'s result for this token, from the cache while the token has time left; failures are never kept. */
  async verifiedOnce<T>(kind: string, token: string, verify: () => Promise<T>): Promise<T> {
    const key = `${kind}\u0000${hashToken(token)}`;
    const now = this.clock.now().getTime();
    const hit = this.verifiedTokens.get(key);
    if (hit && hit.usableUntil > now) return hit.result as T;
    const result = await verify();
    // Verification required `exp`, so the token decodes and carries it.
    const exp = decodeJwt(token).exp;
    const usableUntil = typeof exp === 'number' ? exp * 1000 - VERIFIED_TOKENS.expiryMarginMs : 0;
    if (usableUntil > now) this.verifiedTokens.set(key, { result, usableUntil });
    return result;
  }

  private apiKeyById(id: string): Promise<ApiKeyIdentity | null> {
    return this.apiKeysById.getOrLoad(id, async () => {
      const row = await this.db
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
  }

  private userQuery() {
    return this.db.selectFrom('users').select(['id', 'email', 'roles', 'tenant_id', 'password_changed_at']);
  }
}

function toUser(row: UserRow | undefined): UserIdentity | null {
  return row
    ? {
        id: row.id,
        email: row.email,
        roles: row.roles,
        tenantId: row.tenant_id,
        passwordStamp: row.password_changed_at?.getTime() ?? 0,
      }
    : null;
}
