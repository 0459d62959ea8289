import { generateApiKey, isAdmin, whereTenantOwned, writeTenant, type Principal } from '@agentgw/auth';
import { ForbiddenError, NotFoundError, newId, type Clock, type EventBus } from '@agentgw/core';
import type { ApiKeyRow, ApiKeyScope, Database } from '@agentgw/db';
import type { ExpressionBuilder, Kysely } from 'kysely';

export interface ApiKey {
  id: string;
  name: string;
  scopes: ApiKeyScope[];
  keyPrefix: string;
  tenantId: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

type ApiKeysDeps = { db: Kysely<Database>; bus: EventBus; clock: Clock };

export const DEFAULT_API_KEY_SCOPES: ApiKeyScope[] = ['credentials:resolve'];

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    keyPrefix: row.key_prefix,
    tenantId: row.tenant_id,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

/**
 * Creates a key; the full `gk_` key is returned once and stored only as its hash. A global key
 * spans every tenant, so only an admin may hold one: a non-admin without a tenant gets 403.
 */
export async function createApiKey(
  deps: ApiKeysDeps,
  principal: Principal,
  input: { name: string; scopes?: ApiKeyScope[]; tenantId?: string | null },
): Promise<{ apiKey: ApiKey; key: string }> {
  if (!isAdmin(principal) && principal.tenantId === null) {
    throw new ForbiddenError('Only an admin may create a key without a tenant', 'TENANT_FORBIDDEN');
  }
  const tenantId = writeTenant(principal, input.tenantId);
  const key = generateApiKey();
  const row = await deps.db
    .insertInto('api_keys')
    .values({
      id: newId(),
      name: input.name,
      key_hash: key.hash,
      key_prefix: key.prefix,
      scopes: [...new Set(input.scopes ?? DEFAULT_API_KEY_SCOPES)],
      user_id: principal.userId,
      tenant_id: tenantId,
      created_at: deps.clock.now(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await deps.bus.publish('apikey.changed', { keyId: row.id });
  return { apiKey: toApiKey(row), key: key.token };
}

export async function listApiKeys(db: Kysely<Database>, principal: Principal): Promise<ApiKey[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('revoked_at', 'is', null)
    .where((eb) => manageableBy(eb, principal))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toApiKey);
}

/** Revokes a key (kept with revoked_at for the record); auth stops accepting it at once. */
export async function revokeApiKey(deps: ApiKeysDeps, principal: Principal, id: string): Promise<void> {
  const revoked = await deps.db
    .updateTable('api_keys')
    .set({ revoked_at: deps.clock.now() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where((eb) => manageableBy(eb, principal))
    .returning('id')
    .executeTakeFirst();
  if (!revoked) throw new NotFoundError('API key');
  await deps.bus.publish('apikey.changed', { keyId: id });
}

/**
 * Keys a principal lists and revokes: admin all of them, anyone else exactly their own
 * tenant's (`whereTenantOwned`). Unlike other resources, global (tenant null) keys are not
 * shared downwards: a key acts for any user, so only an admin may see or revoke an admin's
 * global keys, and a tenant_admin without a tenant manages none.
 */
function manageableBy(eb: ExpressionBuilder<Database, 'api_keys'>, principal: Principal) {
  return whereTenantOwned(eb, principal, 'api_keys.tenant_id');
}
