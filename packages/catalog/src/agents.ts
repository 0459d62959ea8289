import { actingUserOf, generateRuntimeToken, whereTenantVisible, writeTenant, type Principal } from '@agentgw/auth';
import { ForbiddenError, NotFoundError, newId, type GatewayEvents, type ToolSurface } from '@agentgw/core';
import { json, type AgentRow, type AgentsTable, type Database } from '@agentgw/db';
import type { Kysely, Updateable } from 'kysely';
import type { CatalogContext } from './catalog-context.js';
import { assertTenantWritable } from './tenant-writes.js';

export interface RequiredCredential {
  serviceType: string;
  description?: string;
}

/** The agent as create returns it (the spec fixes these fields). */
export interface AgentSummary {
  id: string;
  name: string;
  upstreamUrl: string;
  hasUpstreamSecret: boolean;
  isActive: boolean;
  requireConfirmation: boolean;
  requiredCredentials: RequiredCredential[];
  runtimeTokenPrefix: string;
  createdAt: string;
}

/** The agent as list, get and update return it. */
export interface Agent extends AgentSummary {
  description: string | null;
  /** What the unified MCP endpoint lists for it: every tool it may call, or only the search meta-tools. */
  toolSurface: ToolSurface;
  tenantId: string | null;
  ownerId: string | null;
  updatedAt: string;
}

export interface NewAgentInput {
  name: string;
  upstreamUrl: string;
  upstreamSecret?: string;
  description?: string | null;
  requireConfirmation?: boolean;
  toolSurface?: ToolSurface;
  requiredCredentials?: RequiredCredential[];
  tenantId?: string | null;
}

/** `upstreamSecret`: a string sets or replaces the secret, null clears it, absent keeps it. */
export interface AgentPatch {
  name?: string;
  upstreamUrl?: string;
  upstreamSecret?: string | null;
  description?: string | null;
  requireConfirmation?: boolean;
  toolSurface?: ToolSurface;
  requiredCredentials?: RequiredCredential[];
}

type AgentChange = GatewayEvents['agent.changed']['change'];

export function toAgentSummary(row: AgentRow): AgentSummary {
  return {
    id: row.id,
    name: row.name,
    upstreamUrl: row.upstream_url,
    hasUpstreamSecret: row.upstream_secret_enc !== null,
    isActive: row.is_active,
    requireConfirmation: row.require_confirmation,
    requiredCredentials: row.required_credentials,
    runtimeTokenPrefix: row.runtime_token_prefix,
    createdAt: row.created_at.toISOString(),
  };
}

export function toAgent(row: AgentRow): Agent {
  return {
    ...toAgentSummary(row),
    description: row.description,
    toolSurface: row.tool_surface,
    tenantId: row.tenant_id,
    ownerId: row.owner_id,
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Creates an active agent owned by the caller; the runtime token is returned once and stored only as its hash. */
export async function createAgent(
  ctx: CatalogContext,
  principal: Principal,
  input: NewAgentInput,
): Promise<{ agent: AgentSummary; runtimeToken: string }> {
  const tenantId = writeTenant(principal, input.tenantId);
  const id = newId();
  const token = generateRuntimeToken();
  const now = ctx.clock.now();
  const row = await ctx.db
    .insertInto('agents')
    .values({
      id,
      name: input.name,
      description: input.description ?? null,
      upstream_url: input.upstreamUrl,
      upstream_secret_enc: input.upstreamSecret === undefined ? null : ctx.secrets.seal(input.upstreamSecret, id),
      require_confirmation: input.requireConfirmation ?? false,
      tool_surface: input.toolSurface ?? 'all',
      required_credentials: json(input.requiredCredentials ?? []),
      tenant_id: tenantId,
      owner_id: principal.userId,
      is_active: true,
      runtime_token_hash: token.hash,
      runtime_token_prefix: token.prefix,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await changed(ctx, id, 'created');
  return { agent: toAgentSummary(row), runtimeToken: token.token };
}

export async function listAgents(db: Kysely<Database>, principal: Principal): Promise<Agent[]> {
  const rows = await visibleAgents(db, principal).orderBy('created_at').orderBy('id').execute();
  return rows.map(toAgent);
}

export async function getAgent(db: Kysely<Database>, principal: Principal, id: string): Promise<Agent> {
  return toAgent(await loadAgent(db, principal, id));
}

export async function updateAgent(
  ctx: CatalogContext,
  principal: Principal,
  id: string,
  patch: AgentPatch,
): Promise<Agent> {
  await assertWritable(ctx.db, principal, id, 'update');
  const row = await writeAgent(ctx, id, 'updated', {
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.upstreamUrl !== undefined && { upstream_url: patch.upstreamUrl }),
    ...(patch.upstreamSecret !== undefined && {
      upstream_secret_enc: patch.upstreamSecret === null ? null : ctx.secrets.seal(patch.upstreamSecret, id),
    }),
    ...(patch.description !== undefined && { description: patch.description }),
    ...(patch.requireConfirmation !== undefined && { require_confirmation: patch.requireConfirmation }),
    ...(patch.toolSurface !== undefined && { tool_surface: patch.toolSurface }),
    ...(patch.requiredCredentials !== undefined && { required_credentials: json(patch.requiredCredentials) }),
  });
  return toAgent(row);
}

/** Kill switch: disabled agents are refused everywhere as soon as replicas hear `agent.changed`. */
export async function setAgentActive(
  ctx: CatalogContext,
  principal: Principal,
  id: string,
  active: boolean,
): Promise<Agent> {
  await assertWritable(ctx.db, principal, id, 'update');
  return toAgent(await writeAgent(ctx, id, active ? 'enabled' : 'disabled', { is_active: active }));
}

/** Replaces the runtime token; the old hash is gone, so the old token fails on the next lookup. */
export async function regenerateRuntimeToken(ctx: CatalogContext, principal: Principal, id: string): Promise<string> {
  await assertWritable(ctx.db, principal, id, 'update');
  const token = generateRuntimeToken();
  await writeAgent(ctx, id, 'token_rotated', { runtime_token_hash: token.hash, runtime_token_prefix: token.prefix });
  return token.token;
}

/** Deletes the agent together with its access rules (rules naming it as subject). */
export async function deleteAgent(ctx: CatalogContext, principal: Principal, id: string): Promise<void> {
  await assertWritable(ctx.db, principal, id, 'delete');
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('access_rules').where('subject_type', '=', 'agent').where('subject_id', '=', id).execute();
    await trx.deleteFrom('agents').where('id', '=', id).execute();
  });
  await changed(ctx, id, 'deleted');
  await ctx.bus.publish('rules.changed', { subjectType: 'agent', subjectId: id });
}

/**
 * Agents the principal may see: the tenant rule, and for callers who manage only their own
 * agents (no `agent:update:all`, i.e. agent_creator) only the agents they own. Anything else
 * answers 404, so ids of other tenants' and other users' agents do not leak.
 */
function visibleAgents(db: Kysely<Database>, principal: Principal) {
  const ownOnly = !principal.permissions.has('agent:update:all');
  return db
    .selectFrom('agents')
    .selectAll()
    .where((eb) => whereTenantVisible(eb, principal, 'tenant_id'))
    .$if(ownOnly, (qb) => qb.where('owner_id', '=', actingUserOf(principal) ?? ''));
}

async function loadAgent(db: Kysely<Database>, principal: Principal, id: string): Promise<AgentRow> {
  const row = await visibleAgents(db, principal).where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('Agent');
  return row;
}

/**
 * A visible agent the principal may also change: its owner (with the `:own` permission), or a
 * holder of the `:all` permission under the tenant write rule (global agents: admin only, 403).
 */
async function assertWritable(
  db: Kysely<Database>,
  principal: Principal,
  id: string,
  action: 'update' | 'delete',
): Promise<void> {
  const row = await loadAgent(db, principal, id);
  const owns = row.owner_id !== null && row.owner_id === principal.userId;
  if (owns && principal.permissions.has(`agent:${action}:own`)) return;
  if (!principal.permissions.has(`agent:${action}:all`))
    throw new ForbiddenError(`Not permitted to ${action} this agent`);
  assertTenantWritable(principal, row.tenant_id, 'agent');
}

async function writeAgent(
  ctx: CatalogContext,
  id: string,
  change: AgentChange,
  changes: Updateable<AgentsTable>,
): Promise<AgentRow> {
  const row = await ctx.db
    .updateTable('agents')
    .set({ ...changes, updated_at: ctx.clock.now() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError('Agent');
  await changed(ctx, id, change);
  return row;
}

const changed = (ctx: CatalogContext, agentId: string, change: AgentChange): Promise<void> =>
  ctx.bus.publish('agent.changed', { agentId, change });
