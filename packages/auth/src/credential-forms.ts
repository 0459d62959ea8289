import type { Kysely } from 'kysely';
import { ForbiddenError, UnauthorizedError, type Clock, type Logger, type RequestHeaders } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { ExternalIdentities } from './external-identities.js';
import {
  IDENTITY_CACHE,
  type AgentIdentities,
  type AgentIdentity,
  type ApiKeyIdentity,
  type IdentityCache,
  type UserIdentity,
} from './identity-cache.js';
import { permissionsOf } from './permissions.js';
import type {
  ApiKeyPrincipal,
  Principal,
  RuntimeTokenPrincipal,
  SessionTokenPrincipal,
  UserJwtPrincipal,
} from './principal.js';
import type { TokenIssuing } from './token-issuing.js';
import { isVisibleTo } from './tenancy.js';
import { hashToken, sameHash, tokenKind } from './tokens.js';

/** `jwt`: a user JWT only; `flexible`: every credential form (see the package README). */
export type AuthMode = 'jwt' | 'flexible';

/** An API key's `last_used_at` is written at most this often per key and process. */
export const API_KEY_USE_RECORD_INTERVAL_MS = 60_000;

/**
 * The kill switch, the one place it is decided: a disabled agent is refused with 403
 * AGENT_DISABLED. Auth applies it to runtime and session tokens and X-Agent-Id; the catalog
 * (`@agentgw/catalog`, which depends on auth) applies it to agent lookups by id.
 */
export function assertAgentActive(agent: { isActive: boolean }): void {
  if (!agent.isActive) throw new ForbiddenError('Agent is disabled', 'AGENT_DISABLED');
}

export interface CredentialFormsDeps {
  db: Kysely<Database>;
  clock: Clock;
  logger?: Logger;
  identities: Pick<IdentityCache, 'userById' | 'apiKeyByHash'>;
  agents: AgentIdentities;
  external: Pick<ExternalIdentities, 'userFromToken'>;
  sessions: Pick<TokenIssuing, 'verifySessionToken'>;
}

const unauthorized = (message: string, code = 'UNAUTHORIZED') => new UnauthorizedError(message, code);

/** The token of an `Authorization: Bearer` header, null without one; any other scheme is a 401. */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized('Authorization must be a Bearer token');
  return match[1]!;
}

/** What a user's identity gives every form that carries one: the user acts for themselves. */
function userStanding(user: UserIdentity) {
  return {
    userId: user.id,
    email: user.email,
    roles: user.roles,
    tenantId: user.tenantId,
    endUserId: user.id,
    permissions: permissionsOf(user.roles),
  };
}

/** A person signed in with their own JWT. */
const jwtPrincipal = (user: UserIdentity): UserJwtPrincipal => ({
  via: 'jwt',
  ...userStanding(user),
  agentId: null,
  apiKey: null,
});

/**
 * A key is only as good as its creator's current standing (users are cached and dropped by
 * `user.changed`): an admin's key lives while they are admin; anyone else's needs them to
 * still hold `apikey:manage` in the key's tenant, so legacy global keys of non-admins die too.
 */
function canStillIssue(creator: UserIdentity, key: ApiKeyIdentity): boolean {
  if (creator.roles.includes('admin')) return true;
  return (
    permissionsOf(creator.roles).has('apikey:manage') && key.tenantId !== null && key.tenantId === creator.tenantId
  );
}

/**
 * A non-admin's key acts only for users who hold no more than its creator: every permission
 * of the user's roles must be one of the creator's (tenant_admin covers agent_creator).
 */
function assertKeyMayActFor(creator: UserIdentity, user: UserIdentity): void {
  if (creator.roles.includes('admin')) return;
  const allowed = permissionsOf(creator.roles);
  if ([...permissionsOf(user.roles)].some((permission) => !allowed.has(permission))) {
    throw new ForbiddenError(
      "This API key cannot act for a user more privileged than the key's creator",
      'KEY_CANNOT_ACT_FOR_USER',
    );
  }
}

type CheckedApiKey = ApiKeyIdentity & { creator: UserIdentity };

/** The headers of one request, read once. */
interface Presented {
  bearer: string | null;
  sessionToken: string | null;
  agentHeader: string | null;
  userHeader: string | null;
  apiKeyHeader: string | null;
}

/**
 * The credential forms and their checks: user JWT, API key (+ X-User-Id or JWT, + X-Agent-Id),
 * runtime token, session token. `authenticate` answers the caller's Principal or throws 401/403.
 */
export class CredentialForms {
  // Key id → when this process last wrote its use. Only valid keys get here, so it stays small;
  // stale entries are swept should it ever grow past the cache bound.
  private readonly apiKeyUseRecorded = new Map<string, number>();

  constructor(private readonly deps: CredentialFormsDeps) {}

  async authenticate(headers: RequestHeaders, mode: AuthMode): Promise<Principal> {
    const bearer = bearerToken(headers.get('authorization'));
    if (mode === 'jwt') {
      if (bearer === null || tokenKind(bearer) !== null) throw unauthorized('A user JWT is required');
      return jwtPrincipal(await this.deps.external.userFromToken(bearer));
    }
    return this.flexible({
      bearer,
      sessionToken: headers.get('x-gateway-session-token'),
      agentHeader: headers.get('x-agent-id'),
      userHeader: headers.get('x-user-id'),
      apiKeyHeader: headers.get('x-api-key'),
    });
  }

  private async flexible(presented: Presented): Promise<Principal> {
    const { bearer, agentHeader } = presented;
    const bearerKind = bearer === null ? null : tokenKind(bearer);
    if (bearerKind === 'api_key') throw unauthorized('Send API keys in X-Api-Key');
    const runtimeToken = bearerKind === 'runtime' ? bearer : null;
    const userJwt = bearer !== null && bearerKind === null ? bearer : null;
    // A presented API key is always checked, whatever else comes with it.
    const apiKey = presented.apiKeyHeader === null ? null : await this.apiKeyFrom(presented.apiKeyHeader);

    if (presented.sessionToken !== null)
      return this.sessionPrincipal(presented.sessionToken, { runtimeToken, userJwt, agentHeader, apiKey });
    if (apiKey) return this.apiKeyPrincipal(apiKey, userJwt, presented);
    if (runtimeToken !== null) return this.runtimePrincipal(runtimeToken, agentHeader);
    if (userJwt !== null) {
      const user = await this.deps.external.userFromToken(userJwt);
      // Naming an agent would borrow its rules: only the agent's own credentials (an API key the
      // runtime holds, a session token issued to it) may do that, never a user's login alone.
      if (agentHeader !== null) {
        throw new ForbiddenError(
          'X-Agent-Id needs an API key (X-Api-Key) or a session token (X-Gateway-Session-Token); a user JWT alone cannot act as an agent',
          'AGENT_ID_NOT_ALLOWED',
        );
      }
      return jwtPrincipal(user);
    }
    throw unauthorized('Authentication required');
  }

  private async sessionPrincipal(
    sessionToken: string,
    others: {
      runtimeToken: string | null;
      userJwt: string | null;
      agentHeader: string | null;
      apiKey: CheckedApiKey | null;
    },
  ): Promise<SessionTokenPrincipal> {
    const { runtimeToken, userJwt, agentHeader, apiKey } = others;
    if (userJwt !== null) throw unauthorized('Send either a user JWT or a session token, not both');
    const tokenAgent = runtimeToken === null ? null : await this.agentByRuntimeToken(runtimeToken);
    if (tokenAgent && agentHeader !== null && agentHeader !== tokenAgent.id) {
      throw unauthorized('X-Agent-Id does not match the runtime token');
    }
    const agentId = tokenAgent?.id ?? agentHeader;
    if (agentId === null) throw unauthorized('A session token needs X-Agent-Id or the agent runtime token');
    // The signature is checked before X-Agent-Id costs a lookup.
    const claims = await this.deps.sessions.verifySessionToken(sessionToken, { agentId });
    // The end user must still exist (users are cached and dropped by `user.changed`): a deleted one lends nothing.
    if (!(await this.deps.identities.userById(claims.endUserId)))
      throw unauthorized("The session token's end user no longer exists", 'TOKEN_REVOKED');
    const agent = tokenAgent ?? (await this.deps.agents.get(agentId));
    if (!agent) throw unauthorized('Unknown agent');
    assertAgentActive(agent);
    assertKeyTenant(apiKey, claims.tenantId);
    const principal: SessionTokenPrincipal = {
      via: 'session_token',
      userId: claims.endUserId,
      email: claims.email,
      roles: claims.roles,
      tenantId: claims.tenantId,
      agentId: agent.id,
      endUserId: claims.endUserId,
      apiKey: apiKey && { id: apiKey.id, scopes: apiKey.scopes },
      permissions: permissionsOf(claims.roles),
    };
    // A session only ever lends the end user to an agent that user may see (tenancy rule).
    if (!isVisibleTo(principal, agent.tenantId)) throw new ForbiddenError('Agent belongs to another tenant');
    return principal;
  }

  private async apiKeyPrincipal(
    apiKey: CheckedApiKey,
    userJwt: string | null,
    presented: Presented,
  ): Promise<ApiKeyPrincipal> {
    const { userHeader, agentHeader } = presented;
    let user: UserIdentity | null;
    if (userJwt !== null) {
      user = await this.deps.external.userFromToken(userJwt);
      if (userHeader !== null && userHeader !== user.id) throw unauthorized('X-User-Id does not match the JWT');
    } else if (userHeader !== null) {
      user = await this.deps.identities.userById(userHeader);
      if (!user) throw unauthorized('Unknown user');
    } else {
      throw unauthorized('An API key needs X-User-Id or a user JWT');
    }
    assertKeyTenant(apiKey, user.tenantId);
    assertKeyMayActFor(apiKey.creator, user);
    return this.withAgent(
      { via: 'api_key', ...userStanding(user), agentId: null, apiKey: { id: apiKey.id, scopes: apiKey.scopes } },
      agentHeader,
    );
  }

  private async runtimePrincipal(runtimeToken: string, agentHeader: string | null): Promise<RuntimeTokenPrincipal> {
    const agent = await this.agentByRuntimeToken(runtimeToken);
    if (agentHeader !== null && agentHeader !== agent.id)
      throw unauthorized('X-Agent-Id does not match the runtime token');
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

  /** Optional X-Agent-Id beside an API key: the agent must exist, be visible and be active. */
  private async withAgent(principal: ApiKeyPrincipal, agentId: string | null): Promise<ApiKeyPrincipal> {
    if (agentId === null) return principal;
    const agent = await this.deps.agents.get(agentId);
    if (!agent) throw unauthorized('Unknown agent');
    if (!isVisibleTo(principal, agent.tenantId)) throw new ForbiddenError('Agent belongs to another tenant');
    assertAgentActive(agent);
    return { ...principal, agentId: agent.id };
  }

  /** The agent whose current token this is; a stale hash match (rotated token) fails the constant-time compare. */
  private async agentByRuntimeToken(token: string): Promise<AgentIdentity> {
    const hash = hashToken(token);
    const agent = await this.deps.agents.byTokenHash(hash);
    if (!agent || !sameHash(agent.runtimeTokenHash, hash)) throw unauthorized('Invalid runtime token', 'INVALID_TOKEN');
    return agent;
  }

  private async apiKeyFrom(raw: string): Promise<CheckedApiKey> {
    const invalid = () => unauthorized('Invalid API key', 'INVALID_API_KEY');
    if (tokenKind(raw) !== 'api_key') throw invalid();
    const hash = hashToken(raw);
    const key = await this.deps.identities.apiKeyByHash(hash);
    if (!key || key.revoked || !sameHash(key.keyHash, hash)) throw invalid();
    const creator = key.creatorId === null ? null : await this.deps.identities.userById(key.creatorId);
    if (!creator || !canStillIssue(creator, key)) throw invalid();
    this.recordApiKeyUse(key.id);
    return { ...key, creator };
  }

  /** Records an API key's use without holding up the request: throttled, fire-and-forget, errors only logged. */
  private recordApiKeyUse(id: string): void {
    const now = this.deps.clock.now().getTime();
    const last = this.apiKeyUseRecorded.get(id);
    if (last !== undefined && now - last < API_KEY_USE_RECORD_INTERVAL_MS) return;
    if (this.apiKeyUseRecorded.size >= IDENTITY_CACHE.max) {
      for (const [key, at] of this.apiKeyUseRecorded)
        if (now - at >= API_KEY_USE_RECORD_INTERVAL_MS) this.apiKeyUseRecorded.delete(key);
    }
    this.apiKeyUseRecorded.set(id, now);
    this.deps.db
      .updateTable('api_keys')
      .set({ last_used_at: new Date(now) })
      .where('id', '=', id)
      .execute()
      .catch((err: unknown) =>
        this.deps.logger?.warn(
          { keyId: id, reason: err instanceof Error ? err.message : String(err) },
          'could not record API key use',
        ),
      );
  }
}

/** A key with a tenant only serves users of that tenant (403 TENANT_FORBIDDEN); a global key serves any. */
function assertKeyTenant(apiKey: CheckedApiKey | null, tenantId: string | null): void {
  if (apiKey && apiKey.tenantId !== null && apiKey.tenantId !== tenantId) {
    throw new ForbiddenError("User is not in the API key's tenant", 'TENANT_FORBIDDEN');
  }
}
