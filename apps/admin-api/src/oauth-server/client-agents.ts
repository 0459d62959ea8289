import { ALL_CLIENTS, isVisibleTo, type Principal } from '@agentgw/auth';
import { NotFoundError, type EventBus } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';

/** A user's MCP client (or all of them: `*`) bound to an agent: its OAuth calls run under that agent's rules, the user as end user. */
export interface ClientAgentBinding {
  userId: string;
  clientId: string;
  agentId: string;
  createdAt: string;
}

interface Deps {
  db: Kysely<Database>;
  bus: EventBus;
}

/** The user must exist and be within the caller's reach (its tenant); a hidden one reads as missing. */
async function assertUserVisible(db: Kysely<Database>, caller: Principal, userId: string): Promise<void> {
  const user = await db.selectFrom('users').select(['tenant_id']).where('id', '=', userId).executeTakeFirst();
  if (!user || !isVisibleTo(caller, user.tenant_id)) throw new NotFoundError('User not found');
}

const toBinding = (row: {
  user_id: string;
  client_id: string;
  agent_id: string;
  created_at: Date | string;
}): ClientAgentBinding => ({
  userId: row.user_id,
  clientId: row.client_id,
  agentId: row.agent_id,
  createdAt: new Date(row.created_at).toISOString(),
});

/** The bindings of `userId`'s clients, the all-clients one (`*`) first. */
export async function listClientAgents(deps: Deps, caller: Principal, userId: string): Promise<ClientAgentBinding[]> {
  await assertUserVisible(deps.db, caller, userId);
  const rows = await deps.db
    .selectFrom('oauth_client_agents')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('client_id')
    .execute();
  return rows.map(toBinding).sort((a, b) => Number(b.clientId === ALL_CLIENTS) - Number(a.clientId === ALL_CLIENTS));
}

/** Binds a user's client (or all of them) to an agent the caller sees; replaces an earlier binding; every replica hears of it. */
export async function bindClientAgent(
  deps: Deps,
  caller: Principal,
  input: { userId: string; clientId: string; agentId: string },
): Promise<ClientAgentBinding> {
  await assertUserVisible(deps.db, caller, input.userId);
  const agent = await deps.db
    .selectFrom('agents')
    .select(['tenant_id'])
    .where('id', '=', input.agentId)
    .executeTakeFirst();
  if (!agent || !isVisibleTo(caller, agent.tenant_id)) throw new NotFoundError('Agent not found');
  const row = await deps.db
    .insertInto('oauth_client_agents')
    .values({ user_id: input.userId, client_id: input.clientId, agent_id: input.agentId, created_by: caller.userId })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'client_id'])
        .doUpdateSet({ agent_id: input.agentId, created_by: caller.userId, created_at: new Date() }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  await deps.bus.publish('oauth.client_agents_changed', { userId: input.userId });
  return toBinding(row);
}

/** Removes a binding: the client's calls go back to the user's own rules. */
export async function unbindClientAgent(
  deps: Deps,
  caller: Principal,
  input: { userId: string; clientId: string },
): Promise<void> {
  await assertUserVisible(deps.db, caller, input.userId);
  const removed = await deps.db
    .deleteFrom('oauth_client_agents')
    .where('user_id', '=', input.userId)
    .where('client_id', '=', input.clientId)
    .executeTakeFirst();
  if (removed.numDeletedRows === 0n) throw new NotFoundError('No such binding');
  await deps.bus.publish('oauth.client_agents_changed', { userId: input.userId });
}
