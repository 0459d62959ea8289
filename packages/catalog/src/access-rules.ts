import { actingUserOf, isAdmin, whereTenantVisible, writeTenant, type Principal } from '@agentgw/auth';
import {
  CONFIRMATION_CARRIERS,
  NotFoundError,
  evaluatePolicy,
  globSpecificity,
  newId,
  type ConfirmationCarrier,
  type PolicyAction,
  type RiskLevel,
} from '@agentgw/core';
import type { AccessRuleRow, Database } from '@agentgw/db';
import type { Kysely, Transaction } from 'kysely';
import { getAgent } from './agents.js';
import type { CatalogContext } from './catalog-context.js';
import { invalidField } from './invalid-field.js';
import { assertTenantWritable } from './tenant-writes.js';
import { loadVisibleProvider } from './tool-providers.js';

export type SubjectType = 'user' | 'agent';
export type ConfirmationMode = 'always' | 'never';

export interface AccessRule {
  id: string;
  subjectType: SubjectType;
  subjectId: string;
  providerId: string;
  action: PolicyAction;
  toolPattern: string;
  riskLevel: RiskLevel | null;
  confirmationMode: ConfirmationMode | null;
  /** Where its held calls may be confirmed (the console always is); null: the default, console and push. */
  confirmCarriers: ConfirmationCarrier[] | null;
  description: string | null;
  tenantId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewAccessRuleInput {
  subjectType: SubjectType;
  subjectId: string;
  providerId: string;
  action: PolicyAction;
  toolPattern: string;
  riskLevel?: RiskLevel | null;
  confirmationMode?: ConfirmationMode | null;
  confirmCarriers?: ConfirmationCarrier[] | null;
  description?: string | null;
  tenantId?: string | null;
}

export type AccessRulePatch = Partial<Omit<NewAccessRuleInput, 'tenantId'>>;

/** One rule of `PUT /agent/:agentId`. */
export interface AgentRuleInput {
  providerId: string;
  action: PolicyAction;
  toolPattern: string;
  riskLevel?: RiskLevel | null;
}

export interface AccessRuleFilters {
  subjectType?: SubjectType;
  subjectId?: string;
  providerId?: string;
  action?: PolicyAction;
}

export interface EvaluationInput {
  userId?: string;
  agentId?: string;
  providerId: string;
  toolName: string;
}

type Db = Kysely<Database> | Transaction<Database>;

export function toAccessRule(row: AccessRuleRow): AccessRule {
  return {
    id: row.id,
    subjectType: row.subject_type,
    subjectId: row.subject_id,
    providerId: row.provider_id,
    action: row.action,
    toolPattern: row.tool_pattern,
    riskLevel: row.risk_level,
    confirmationMode: row.confirmation_mode,
    confirmCarriers: row.confirm_carriers,
    description: row.description,
    tenantId: row.tenant_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Visible rules (own tenant and global), oldest first; every filter given must match. */
export async function listAccessRules(
  db: Kysely<Database>,
  principal: Principal,
  filters: AccessRuleFilters,
): Promise<AccessRule[]> {
  const { subjectType, subjectId, providerId, action } = filters;
  let query = visibleRules(db, principal);
  if (subjectType !== undefined) query = query.where('subject_type', '=', subjectType);
  if (subjectId !== undefined) query = query.where('subject_id', '=', subjectId);
  if (providerId !== undefined) query = query.where('provider_id', '=', providerId);
  if (action !== undefined) query = query.where('action', '=', action);
  const rows = await query.orderBy('created_at').orderBy('id').execute();
  return rows.map(toAccessRule);
}

export async function getAccessRule(db: Kysely<Database>, principal: Principal, id: string): Promise<AccessRule> {
  return toAccessRule(await loadVisibleRule(db, principal, id));
}

/** A provider's rules grouped by toolPattern, most specific pattern first (the order evaluation prefers). */
export async function accessRulesByProvider(
  db: Kysely<Database>,
  principal: Principal,
  providerId: string,
): Promise<{ providerId: string; groups: { toolPattern: string; rules: AccessRule[] }[] }> {
  if (providerId !== '*') await loadVisibleProvider(db, principal, providerId);
  const rules = await listAccessRules(db, principal, { providerId });
  const groups = new Map<string, AccessRule[]>();
  for (const rule of rules) groups.set(rule.toolPattern, [...(groups.get(rule.toolPattern) ?? []), rule]);
  const ordered = [...groups.entries()]
    .map(([toolPattern, list]) => ({ toolPattern, rules: list }))
    .sort(
      (a, b) =>
        globSpecificity(b.toolPattern) - globSpecificity(a.toolPattern) || a.toolPattern.localeCompare(b.toolPattern),
    );
  return { providerId, groups: ordered };
}

export async function createAccessRule(
  ctx: CatalogContext,
  principal: Principal,
  input: NewAccessRuleInput,
): Promise<AccessRule> {
  const tenantId = writeTenant(principal, input.tenantId);
  await assertSubjectUsable(ctx.db, principal, input.subjectType, input.subjectId, 'subjectId');
  await assertProviderUsable(ctx.db, principal, input.providerId, 'providerId');
  const now = ctx.clock.now();
  const row = await ctx.db
    .insertInto('access_rules')
    .values({
      id: newId(),
      subject_type: input.subjectType,
      subject_id: input.subjectId,
      provider_id: input.providerId,
      action: input.action,
      tool_pattern: input.toolPattern,
      risk_level: input.riskLevel ?? null,
      confirmation_mode: input.confirmationMode ?? null,
      confirm_carriers: carriersOf(input.confirmCarriers),
      description: input.description ?? null,
      tenant_id: tenantId,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await rulesChanged(ctx, row);
  return toAccessRule(row);
}

export async function updateAccessRule(
  ctx: CatalogContext,
  principal: Principal,
  id: string,
  patch: AccessRulePatch,
): Promise<AccessRule> {
  const current = await loadVisibleRule(ctx.db, principal, id);
  assertTenantWritable(principal, current.tenant_id, 'access rule');
  if (patch.subjectType !== undefined || patch.subjectId !== undefined) {
    const subjectType = patch.subjectType ?? current.subject_type;
    await assertSubjectUsable(ctx.db, principal, subjectType, patch.subjectId ?? current.subject_id, 'subjectId');
  }
  if (patch.providerId !== undefined) await assertProviderUsable(ctx.db, principal, patch.providerId, 'providerId');
  const row = await ctx.db
    .updateTable('access_rules')
    .set({
      ...(patch.subjectType !== undefined && { subject_type: patch.subjectType }),
      ...(patch.subjectId !== undefined && { subject_id: patch.subjectId }),
      ...(patch.providerId !== undefined && { provider_id: patch.providerId }),
      ...(patch.action !== undefined && { action: patch.action }),
      ...(patch.toolPattern !== undefined && { tool_pattern: patch.toolPattern }),
      ...(patch.riskLevel !== undefined && { risk_level: patch.riskLevel }),
      ...(patch.confirmationMode !== undefined && { confirmation_mode: patch.confirmationMode }),
      ...(patch.confirmCarriers !== undefined && { confirm_carriers: carriersOf(patch.confirmCarriers) }),
      ...(patch.description !== undefined && { description: patch.description }),
      updated_at: ctx.clock.now(),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError('Access rule');
  await rulesChanged(ctx, current);
  if (row.subject_type !== current.subject_type || row.subject_id !== current.subject_id) await rulesChanged(ctx, row);
  return toAccessRule(row);
}

export async function deleteAccessRule(ctx: CatalogContext, principal: Principal, id: string): Promise<void> {
  const current = await loadVisibleRule(ctx.db, principal, id);
  assertTenantWritable(principal, current.tenant_id, 'access rule');
  await ctx.db.deleteFrom('access_rules').where('id', '=', id).execute();
  await rulesChanged(ctx, current);
}

/** Every visible rule whose subject is the agent, oldest first. Unknown or invisible agent: 404. */
export async function listAgentRules(
  db: Kysely<Database>,
  principal: Principal,
  agentId: string,
): Promise<AccessRule[]> {
  await getAgent(db, principal, agentId);
  return listAccessRules(db, principal, { subjectType: 'agent', subjectId: agentId });
}

/**
 * Replaces all of the agent's rules in one transaction: every rule is checked first, so one
 * bad rule is a 400 and the old set stays untouched. New rules take the agent's tenant.
 */
export async function replaceAgentRules(
  ctx: CatalogContext,
  principal: Principal,
  agentId: string,
  rules: AgentRuleInput[],
): Promise<AccessRule[]> {
  const agent = await getAgent(ctx.db, principal, agentId);
  assertTenantWritable(principal, agent.tenantId, 'agent');
  const now = ctx.clock.now();
  const rows = await ctx.db.transaction().execute(async (trx) => {
    for (const [i, rule] of rules.entries())
      await assertProviderUsable(trx, principal, rule.providerId, `rules.${i}.providerId`);
    await trx
      .deleteFrom('access_rules')
      .where('subject_type', '=', 'agent')
      .where('subject_id', '=', agentId)
      .execute();
    if (rules.length === 0) return [];
    return trx
      .insertInto('access_rules')
      .values(
        rules.map((rule, i) => ({
          id: newId(),
          subject_type: 'agent' as const,
          subject_id: agentId,
          provider_id: rule.providerId,
          action: rule.action,
          tool_pattern: rule.toolPattern,
          risk_level: rule.riskLevel ?? null,
          tenant_id: agent.tenantId,
          // Distinct instants keep the submitted order as the evaluation tie-break (earliest first).
          created_at: new Date(now.getTime() + i),
          updated_at: now,
        })),
      )
      .returningAll()
      .execute();
  });
  await ctx.bus.publish('rules.changed', { subjectType: 'agent', subjectId: agentId });
  return rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime()).map(toAccessRule);
}

/** Dry run of the tool policy over the visible rules of the user and the agent. */
export async function evaluateAccess(
  db: Kysely<Database>,
  principal: Principal,
  input: EvaluationInput,
): Promise<{ action: PolicyAction; risk: RiskLevel; matchedRule: AccessRule | null }> {
  const subjects: { type: SubjectType; id: string }[] = [];
  if (input.userId !== undefined) subjects.push({ type: 'user', id: input.userId });
  if (input.agentId !== undefined) subjects.push({ type: 'agent', id: input.agentId });
  const rows =
    subjects.length === 0
      ? []
      : await visibleRules(db, principal)
          .where('provider_id', 'in', [input.providerId, '*'])
          .where((eb) =>
            eb.or(subjects.map((s) => eb.and([eb('subject_type', '=', s.type), eb('subject_id', '=', s.id)]))),
          )
          .execute();
  return evaluatePolicy({
    rules: rows.map(toAccessRule),
    userId: input.userId,
    agentId: input.agentId,
    providerId: input.providerId,
    toolName: input.toolName,
  });
}

/**
 * Rules in the caller's tenant view. Callers who cannot manage rules (no `provider:update`, i.e.
 * agent_creator) see only the rules about themselves and about agents they own: other owners'
 * rules would map out which agents hold which tools.
 */
function visibleRules(db: Db, principal: Principal) {
  const ownOnly = !principal.permissions.has('provider:update');
  const userId = actingUserOf(principal) ?? '';
  return db
    .selectFrom('access_rules')
    .selectAll()
    .where((eb) => whereTenantVisible(eb, principal, 'access_rules.tenant_id'))
    .$if(ownOnly, (qb) =>
      qb.where((eb) =>
        eb.or([
          eb.and([eb('subject_type', '=', 'user'), eb('subject_id', '=', userId)]),
          eb.and([
            eb('subject_type', '=', 'agent'),
            eb('subject_id', 'in', eb.selectFrom('agents').select('agents.id').where('agents.owner_id', '=', userId)),
          ]),
        ]),
      ),
    );
}

async function loadVisibleRule(db: Kysely<Database>, principal: Principal, id: string): Promise<AccessRuleRow> {
  const row = await visibleRules(db, principal).where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('Access rule');
  return row;
}

/** `*` or a provider the principal can see; anything else is a 400 on the field that names it. */
async function assertProviderUsable(db: Db, principal: Principal, providerId: string, field: string): Promise<void> {
  if (providerId === '*') return;
  const found = await db
    .selectFrom('tool_providers')
    .select('id')
    .where('id', '=', providerId)
    .where((eb) => whereTenantVisible(eb, principal, 'tool_providers.tenant_id'))
    .executeTakeFirst();
  if (!found) throw invalidField(field, 'unknown tool provider');
}

/**
 * Rules act across tenants only through an admin. An agent subject must be an agent the caller
 * can change; a user subject, for non-admins, a user of the caller's own tenant. Admins may name
 * any user id, including users of external issuers that have no row here.
 */
async function assertSubjectUsable(
  db: Kysely<Database>,
  principal: Principal,
  type: SubjectType,
  subjectId: string,
  field: string,
): Promise<void> {
  if (type === 'agent') {
    const agent = await getAgent(db, principal, subjectId).catch((err: unknown) => {
      if (err instanceof NotFoundError) throw invalidField(field, 'unknown agent');
      throw err;
    });
    assertTenantWritable(principal, agent.tenantId, 'agent');
    return;
  }
  if (isAdmin(principal)) return;
  // Without a tenant, the only user in the caller's (private) scope is the caller.
  if (principal.tenantId === null && subjectId === principal.userId) return;
  const user = await db
    .selectFrom('users')
    .select('id')
    .where('id', '=', subjectId)
    .where('tenant_id', '=', principal.tenantId ?? '')
    .executeTakeFirst();
  if (!user) throw invalidField(field, 'unknown user');
}

/** A rule's carriers as stored: the console is always one, each once, in the vocabulary's order; null stays the default. */
const carriersOf = (carriers: readonly ConfirmationCarrier[] | null | undefined): ConfirmationCarrier[] | null =>
  carriers == null ? null : CONFIRMATION_CARRIERS.filter((c) => c === 'console' || carriers.includes(c));

const rulesChanged = (ctx: CatalogContext, row: Pick<AccessRuleRow, 'subject_type' | 'subject_id'>): Promise<void> =>
  ctx.bus.publish('rules.changed', { subjectType: row.subject_type, subjectId: row.subject_id });
