import { actingUserOf, tenantScope, whereTenantVisible, writeTenant, type Principal } from '@agentgw/auth';
import { compareRouting, NotFoundError, newId, type ToolPinningMode } from '@agentgw/core';
import {
  json,
  type Database,
  type ProviderAuthType,
  type ProviderTokenExchangeSettings,
  type ToolProviderRow,
} from '@agentgw/db';
import type { Kysely } from 'kysely';
import type { CatalogContext } from './catalog-context.js';
import { openSealed } from './sealed-secrets.js';
import { invalidField } from './invalid-field.js';
import { assertCredentialTypeInScope, assertExchangeConfigurable, isPerUserAuth } from './provider-credential-scope.js';
import { assertTenantWritable } from './tenant-writes.js';

/**
 * A new provider pins each tool definition the first time it is listed and quarantines a later
 * change until an admin approves it: a provider left at `off` would pass on a changed description
 * (a tool-poisoning vector) until an admin thought of pinning it.
 */
const NEW_PROVIDER_PINNING = 'first_sight' satisfies ToolPinningMode;

/** A provider's tool-name prefix: short and in MCP's tool-name charset, so `<prefix>__<tool>` stays within 64 characters for most tools. */
export const NAME_PREFIX_RULE = { pattern: /^[a-z0-9][a-z0-9_-]*$/, maxLength: 16 } as const;

export interface ToolProvider {
  id: string;
  name: string;
  pattern: string;
  endpoint: string;
  authType: ProviderAuthType;
  hasAuthSecret: boolean;
  /** With `user_oauth`/`user_key`: whose credential of which service type each call carries (the calling user's). */
  credentialServiceType: string | null;
  /** With `token_exchange`: where the caller's sign-in token is exchanged and for what (the client secret is `hasAuthSecret`). */
  tokenExchange: ProviderTokenExchangeSettings | null;
  priority: number;
  description: string | null;
  /** Prepended with `__` to the names of its tools on the unified endpoint; null: names are kept (a collision is disambiguated). */
  namePrefix: string | null;
  tenantId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewToolProviderInput {
  name: string;
  pattern: string;
  endpoint: string;
  authType: ProviderAuthType;
  authSecret?: string;
  credentialServiceType?: string | null;
  tokenExchange?: ProviderTokenExchangeSettings | null;
  priority: number;
  description?: string | null;
  namePrefix?: string | null;
  tenantId?: string | null;
}

/** Absent fields stay; `authSecret: null` removes the stored secret. */
export interface ToolProviderPatch {
  name?: string;
  pattern?: string;
  endpoint?: string;
  authType?: ProviderAuthType;
  authSecret?: string | null;
  credentialServiceType?: string | null;
  tokenExchange?: ProviderTokenExchangeSettings | null;
  priority?: number;
  description?: string | null;
  /** A changed prefix renames the provider's exposed tools (its stored names are dropped). */
  namePrefix?: string | null;
}

/** The only way a provider row leaves the service: the sealed secret becomes `hasAuthSecret`. */
export function toToolProvider(row: ToolProviderRow): ToolProvider {
  return {
    id: row.id,
    name: row.name,
    pattern: row.pattern,
    endpoint: row.endpoint,
    authType: row.auth_type,
    hasAuthSecret: row.auth_secret_enc !== null,
    credentialServiceType: row.credential_service_type,
    tokenExchange: row.token_exchange,
    priority: row.priority,
    description: row.description,
    namePrefix: row.name_prefix,
    tenantId: row.tenant_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Visible providers, in routing order (`compareRouting`: the order a call picks them in). */
export async function listToolProviders(db: Kysely<Database>, principal: Principal): Promise<ToolProvider[]> {
  const rows = await visibleProviders(db, principal).execute();
  return rows.map(toToolProvider).sort(compareRouting);
}

/**
 * The providers a principal may see: whoever manages providers (`provider:update`) sees its
 * tenant's and the global ones; anyone else (a self-registered user, an agent creator) only
 * those they may use: an allow-class access rule of theirs, or of an agent they own, names the
 * provider or `*` (in their scope or global), so no other provider's name, id or tools show.
 */
function visibleProviders(db: Kysely<Database>, principal: Principal) {
  const visible = db
    .selectFrom('tool_providers')
    .selectAll()
    .where((eb) => whereTenantVisible(eb, principal, 'tool_providers.tenant_id'));
  if (principal.permissions.has('provider:update')) return visible;
  const userId = actingUserOf(principal) ?? '';
  const scope = tenantScope(principal);
  return visible.where((eb) =>
    eb.exists(
      eb
        .selectFrom('access_rules')
        .select('access_rules.id')
        .where('access_rules.action', '!=', 'deny')
        .where((r) =>
          r.or([
            r('access_rules.provider_id', '=', r.ref('tool_providers.id')),
            r('access_rules.provider_id', '=', '*'),
          ]),
        )
        .where((r) =>
          r.or([
            r('access_rules.tenant_id', 'is', null),
            ...(scope === null ? [] : [r('access_rules.tenant_id', '=', scope)]),
          ]),
        )
        .where((r) =>
          r.or([
            r.and([r('access_rules.subject_type', '=', 'user'), r('access_rules.subject_id', '=', userId)]),
            r.and([
              r('access_rules.subject_type', '=', 'agent'),
              r(
                'access_rules.subject_id',
                'in',
                r.selectFrom('agents').select('agents.id').where('agents.owner_id', '=', userId),
              ),
            ]),
          ]),
        ),
    ),
  );
}

export async function getToolProvider(db: Kysely<Database>, principal: Principal, id: string): Promise<ToolProvider> {
  return toToolProvider(await loadVisibleProvider(db, principal, id));
}

/** A per-user auth type needs the service type of the credential it sends. */
function assertUserAuthNamed(authType: ProviderAuthType, credentialServiceType: string | null): void {
  if (isPerUserAuth(authType) && credentialServiceType === null)
    throw invalidField('credentialServiceType', `required with authType ${authType}`);
}

/** `token_exchange` needs its exchange settings. */
function assertTokenExchangeSet(authType: ProviderAuthType, tokenExchange: ProviderTokenExchangeSettings | null): void {
  if (authType === 'token_exchange' && tokenExchange === null)
    throw invalidField('tokenExchange', 'required with authType token_exchange');
}

export async function createToolProvider(
  ctx: CatalogContext,
  principal: Principal,
  input: NewToolProviderInput,
): Promise<ToolProvider> {
  assertUserAuthNamed(input.authType, input.credentialServiceType ?? null);
  assertTokenExchangeSet(input.authType, input.tokenExchange ?? null);
  assertExchangeConfigurable(principal, input.authType);
  const tenantId = writeTenant(principal, input.tenantId);
  await assertCredentialTypeInScope(ctx.db, {
    tenantId,
    authType: input.authType,
    credentialServiceType: input.credentialServiceType ?? null,
    endpoint: input.endpoint,
  });
  const id = newId();
  const now = ctx.clock.now();
  const row = await ctx.db
    .insertInto('tool_providers')
    .values({
      id,
      name: input.name,
      pattern: input.pattern,
      endpoint: input.endpoint,
      auth_type: input.authType,
      auth_secret_enc: input.authSecret ? ctx.secrets.seal(input.authSecret, id) : null,
      credential_service_type: input.credentialServiceType ?? null,
      token_exchange: input.tokenExchange ? json(input.tokenExchange) : null,
      priority: input.priority,
      description: input.description ?? null,
      name_prefix: input.namePrefix ?? null,
      tenant_id: tenantId,
      tool_pinning: NEW_PROVIDER_PINNING,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await ctx.bus.publish('providers.changed', { providerId: id });
  return toToolProvider(row);
}

export async function updateToolProvider(
  ctx: CatalogContext,
  principal: Principal,
  id: string,
  patch: ToolProviderPatch,
): Promise<ToolProvider> {
  const current = await loadVisibleProvider(ctx.db, principal, id);
  assertTenantWritable(principal, current.tenant_id, 'tool provider');
  const target = {
    tenantId: current.tenant_id,
    authType: patch.authType ?? current.auth_type,
    credentialServiceType:
      patch.credentialServiceType !== undefined ? patch.credentialServiceType : current.credential_service_type,
    endpoint: patch.endpoint ?? current.endpoint,
  };
  assertUserAuthNamed(target.authType, target.credentialServiceType);
  assertTokenExchangeSet(
    target.authType,
    patch.tokenExchange !== undefined ? patch.tokenExchange : current.token_exchange,
  );
  // Where a provider's callers' credentials or exchanged tokens go is re-checked whenever it changes.
  if (patch.authType !== undefined || patch.tokenExchange !== undefined || patch.endpoint !== undefined)
    assertExchangeConfigurable(principal, target.authType);
  if (patch.authType !== undefined || patch.credentialServiceType !== undefined || patch.endpoint !== undefined)
    await assertCredentialTypeInScope(ctx.db, target);
  const changes = {
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.pattern !== undefined && { pattern: patch.pattern }),
    ...(patch.endpoint !== undefined && { endpoint: patch.endpoint }),
    ...(patch.authType !== undefined && { auth_type: patch.authType }),
    ...(patch.authSecret !== undefined && {
      auth_secret_enc: patch.authSecret ? ctx.secrets.seal(patch.authSecret, id) : null,
    }),
    ...(patch.credentialServiceType !== undefined && { credential_service_type: patch.credentialServiceType }),
    ...(patch.tokenExchange !== undefined && {
      token_exchange: patch.tokenExchange ? json(patch.tokenExchange) : null,
    }),
    ...(patch.priority !== undefined && { priority: patch.priority }),
    ...(patch.description !== undefined && { description: patch.description }),
    ...(patch.namePrefix !== undefined && { name_prefix: patch.namePrefix }),
  };
  const renamed = patch.namePrefix !== undefined && patch.namePrefix !== current.name_prefix;
  const row = await ctx.db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('tool_providers')
      .set({ ...changes, updated_at: ctx.clock.now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    // The names it exposed were made with the old prefix: they are chosen again with the new one.
    if (updated && renamed) await trx.deleteFrom('tool_names').where('provider_id', '=', id).execute();
    return updated;
  });
  if (!row) throw new NotFoundError('Tool provider');
  await ctx.bus.publish('providers.changed', { providerId: id });
  return toToolProvider(row);
}

/** Deletes the provider and, in the same transaction, every access rule naming it. */
export async function deleteToolProvider(ctx: CatalogContext, principal: Principal, id: string): Promise<void> {
  const current = await loadVisibleProvider(ctx.db, principal, id);
  assertTenantWritable(principal, current.tenant_id, 'tool provider');
  const removedRules = await ctx.db.transaction().execute(async (trx) => {
    const rules = await trx.deleteFrom('access_rules').where('provider_id', '=', id).returning('id').execute();
    const deleted = await trx.deleteFrom('tool_providers').where('id', '=', id).returning('id').executeTakeFirst();
    if (!deleted) throw new NotFoundError('Tool provider');
    return rules.length;
  });
  await ctx.bus.publish('providers.changed', { providerId: id });
  if (removedRules > 0) await ctx.bus.publish('rules.changed', { subjectType: null, subjectId: null });
}

/** A provider the principal may see (`visibleProviders`); any other is 404 like an unknown id. */
export async function loadVisibleProvider(
  db: Kysely<Database>,
  principal: Principal,
  id: string,
): Promise<ToolProviderRow> {
  const row = await visibleProviders(db, principal).where('tool_providers.id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('Tool provider');
  return row;
}

/** Where and how to reach a provider (the admin API's live tool list): read from the database, its secret opened (unopenable → 503). */
export interface ProviderConnection {
  endpoint: string;
  authType: ProviderAuthType;
  secret: string | null;
}

export async function providerConnection(
  ctx: CatalogContext,
  principal: Principal,
  id: string,
): Promise<ProviderConnection> {
  const row = await loadVisibleProvider(ctx.db, principal, id);
  return {
    endpoint: row.endpoint,
    authType: row.auth_type,
    secret: openSealed(ctx, 'provider', row.id, row.auth_secret_enc),
  };
}
