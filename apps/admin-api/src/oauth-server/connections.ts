import { recordIdentityEvent } from '@agentgw/audit';
import { isVisibleTo, type Principal } from '@agentgw/auth';
import { ForbiddenError, NotFoundError, type EventBus } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { revokeGrant } from './kysely-oidc-adapter.js';

/** A user's connection of an MCP client: one OAuth grant, the endpoints it covers, when it was made. */
export interface OAuthConnection {
  grantId: string;
  userId: string;
  clientId: string;
  /** The name the client registered with (dynamic registration); null for a metadata-document client (its id is its URL). */
  clientName: string | null;
  resources: string[];
  createdAt: string;
}

/** Whether the caller may see and revoke `userId`'s connections: their own, or as a user manager who sees that user. */
async function assertMayManage(
  db: Kysely<Database>,
  caller: Principal & { userId: string },
  userId: string,
): Promise<void> {
  if (caller.userId === userId) return;
  if (!caller.permissions.has('user:manage'))
    throw new ForbiddenError("Only user managers see other users' connected clients");
  const user = await db.selectFrom('users').select(['tenant_id']).where('id', '=', userId).executeTakeFirst();
  if (!user || !isVisibleTo(caller, user.tenant_id)) throw new NotFoundError('User not found');
}

/** The MCP clients `userId` connected (live grants), newest first. */
export async function listConnections(
  db: Kysely<Database>,
  caller: Principal & { userId: string },
  userId: string,
): Promise<OAuthConnection[]> {
  await assertMayManage(db, caller, userId);
  const rows = await db
    .selectFrom('oauth_models')
    .select(['id', 'payload'])
    .where('model', '=', 'Grant')
    .where('account_id', '=', userId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date())]))
    .execute();
  const names = await clientNames(
    db,
    rows.map((row) => String((row.payload as { clientId?: string }).clientId ?? '')),
  );
  return rows
    .map((row) => {
      const payload = row.payload as { clientId?: string; resources?: Record<string, string>; iat?: number };
      const clientId = String(payload.clientId ?? '');
      return {
        grantId: row.id,
        userId,
        clientId,
        clientName: names.get(clientId) ?? null,
        resources: Object.keys(payload.resources ?? {}),
        createdAt: new Date((payload.iat ?? 0) * 1000).toISOString(),
      };
    })
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** The registered names of stored clients, by client id. */
async function clientNames(db: Kysely<Database>, clientIds: string[]): Promise<Map<string, string>> {
  const ids = [...new Set(clientIds.filter((id) => id !== ''))];
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('oauth_models')
    .select(['id', 'payload'])
    .where('model', '=', 'Client')
    .where('id', 'in', ids)
    .execute();
  const names = new Map<string, string>();
  for (const row of rows) {
    const name = (row.payload as { client_name?: unknown }).client_name;
    if (typeof name === 'string') names.set(row.id, name);
  }
  return names;
}

/** The tenant of user `userId` (null: global, or no such user any more): where an identity event about them belongs. */
export async function tenantOf(db: Kysely<Database>, userId: string): Promise<string | null> {
  const user = await db.selectFrom('users').select('tenant_id').where('id', '=', userId).executeTakeFirst();
  return user?.tenant_id ?? null;
}

/** Revokes a connection: its grant, refresh and access tokens (at once on every replica) and the remembered consent. */
export async function revokeConnection(
  deps: { db: Kysely<Database>; bus: EventBus },
  caller: Principal & { userId: string },
  grantId: string,
): Promise<void> {
  const row = await deps.db
    .selectFrom('oauth_models')
    .select(['account_id', 'payload'])
    .where('model', '=', 'Grant')
    .where('id', '=', grantId)
    .executeTakeFirst();
  if (!row || row.account_id === null) throw new NotFoundError('Connection not found');
  await assertMayManage(deps.db, caller, row.account_id);
  const clientId = (row.payload as { clientId?: string }).clientId;
  await revokeGrant(deps, grantId);
  await recordIdentityEvent(deps.db, {
    type: 'oauth.grant_revoked',
    actorId: caller.userId,
    userId: row.account_id,
    tenantId: await tenantOf(deps.db, row.account_id),
    clientId: clientId ?? null,
    details: { grantId, by: caller.userId === row.account_id ? 'user' : 'user_manager' },
  });
  if (clientId !== undefined)
    await deps.db
      .deleteFrom('oauth_consents')
      .where('user_id', '=', row.account_id)
      .where('client_id', '=', clientId)
      .execute();
}
