import { isVisibleTo, tenantScope, whereTenantVisible, writeTenant, type Principal } from '@agentgw/auth';
import { DependencyUnavailableError, NotFoundError, newId, resolveProvider, globSpecificity, type Unsubscribe } from '@agentgw/core';
import type { Database, ProviderAuthType, ToolProviderRow } from '@agentgw/db';
import type { Kysely } from 'kysely';
import type { CatalogContext } from './catalog-context.js';
import { LiveCache } from './live-cache.js';
import { assertTenantWritable } from './tenant-writes.js';

export interface ToolProvider {
  id: string;
  name: string;
  pattern: string;
  endpoint: string;
  authType: ProviderAuthType;
  hasAuthSecret: boolean;
  priority: number;
  description: string | null;
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
  priority: number;
  description?: string | null;
  tenantId?: string | null;
}

/** Absent fields stay; `authSecret: null` removes the stored secret. */
export interface ToolProviderPatch {
  name?: string;
  pattern?: string;
  endpoint?: string;
  authType?: ProviderAuthType;
  authSecret?: string | null;
  priority?: number;
  description?: string | null;
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
    priority: row.priority,
    description: row.description,
    tenantId: row.tenant_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Visible providers, in routing order (priority first). */
export async function listToolProviders(db: Kysely<Database>, principal: Principal): Promise<ToolProvider[]> {
  const rows = await db
    .selectFrom('tool_providers')
    .selectAll()
    .where((eb) => whereTenantVisible(eb, principal, 'tool_providers.tenant_id'))
    .orderBy('priority', 'desc')
    .orderBy('name')
    .orderBy('id')
    .execute();
  return rows.map(toToolProvider);
}

export async function getToolProvider(db: Kysely<Database>, principal: Principal, id: string): Promise<ToolProvider> {
  return toToolProvider(await loadVisibleProvider(db, principal, id));
}

export async function createToolProvider(
  ctx: CatalogContext,
  principal: Principal,
  input: NewToolProviderInput,
): Promise<ToolProvider> {
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
      priority: input.priority,
      description: input.description ?? null,
      tenant_id: writeTenant(principal, input.tenantId),
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
  const changes = {
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.pattern !== undefined && { pattern: patch.pattern }),
    ...(patch.endpoint !== undefined && { endpoint: patch.endpoint }),
    ...(patch.authType !== undefined && { auth_type: patch.authType }),
    ...(patch.authSecret !== undefined && { auth_secret_enc: patch.authSecret ? ctx.secrets.seal(patch.authSecret, id) : null }),
    ...(patch.priority !== undefined && { priority: patch.priority }),
    ...(patch.description !== undefined && { description: patch.description }),
  };
  const row = await ctx.db
    .updateTable('tool_providers')
    .set({ ...changes, updated_at: ctx.clock.now() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
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

/** A provider the principal may see; other tenants' providers are 404 like unknown ids. */
export async function loadVisibleProvider(db: Kysely<Database>, principal: Principal, id: string): Promise<ToolProviderRow> {
  const row = await db
    .selectFrom('tool_providers')
    .selectAll()
    .where('id', '=', id)
    .where((eb) => whereTenantVisible(eb, principal, 'tool_providers.tenant_id'))
    .executeTakeFirst();
  if (!row) throw new NotFoundError('Tool provider');
  return row;
}

/** A provider as routing and forwarding need it. The auth secret stays sealed until asked for. */
export interface ProviderRecord {
  id: string;
  name: string;
  pattern: string;
  endpoint: string;
  authType: ProviderAuthType;
  priority: number;
  description: string | null;
  tenantId: string | null;
  authSecretSealed: string | null;
}

const ALL = 'all';

/** Routing order: priority, then the most specific pattern, then the name (as `resolveProvider` picks). */
function routingOrder(a: ProviderRecord, b: ProviderRecord): number {
  return (
    b.priority - a.priority ||
    globSpecificity(b.pattern) - globSpecificity(a.pattern) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/**
 * Every provider, loaded as one table (providers are few and every call routes over all of them),
 * cached in memory and dropped whole on `providers.changed`.
 */
export class ProviderDirectory {
  private readonly cache: LiveCache<ProviderRecord[]>;

  constructor(
    private readonly ctx: CatalogContext,
    ttlMs: number,
  ) {
    this.cache = new LiveCache({ ttlMs, max: 1, clock: ctx.clock });
  }

  /** Subscribes to `providers.changed`; the catalog's `start()` calls it. */
  subscribe(): Promise<Unsubscribe> {
    return this.cache.listen(this.ctx.bus, 'providers.changed', () => null);
  }

  /** The providers the principal may use (own tenant and global; admins all), in routing order. */
  async visibleTo(principal: Principal): Promise<ProviderRecord[]> {
    return (await this.table()).filter((p) => isVisibleTo(principal, p.tenantId));
  }

  /**
   * The providers a call acting for the principal routes over, in routing order: global ones and
   * those of the tenant it acts in (`tenantScope`). Admins too: seeing every tenant is for
   * administration; a call acts in one tenant, so another tenant's provider never claims its names.
   */
  async routableFor(principal: Principal): Promise<ProviderRecord[]> {
    const scope = tenantScope(principal);
    return (await this.table()).filter((p) => p.tenantId === null || p.tenantId === scope);
  }

  /** The provider or null, whatever its tenant. */
  async get(providerId: string): Promise<ProviderRecord | null> {
    return (await this.table()).find((p) => p.id === providerId) ?? null;
  }

  /** The provider as the principal may address it; another tenant's provider is 404 like an unknown id. */
  async getFor(principal: Principal, providerId: string): Promise<ProviderRecord> {
    const provider = await this.get(providerId);
    if (!provider || !isVisibleTo(principal, provider.tenantId)) throw new NotFoundError('Tool provider');
    return provider;
  }

  /** The provider that owns `toolName` among `providers` (pattern match, then priority; see `resolveProvider`). */
  route<P extends ProviderRecord>(toolName: string, providers: readonly P[]): P | null {
    return resolveProvider(providers, toolName);
  }

  /** The plaintext auth secret, or null when none is stored; a secret no configured key opens is a 503. */
  authSecret(provider: ProviderRecord): string | null {
    if (provider.authSecretSealed === null) return null;
    const secret = this.ctx.secrets.open(provider.authSecretSealed, provider.id);
    if (secret === null) {
      this.ctx.logger.error({ providerId: provider.id }, 'provider auth secret cannot be unsealed with the configured keys');
      throw new DependencyUnavailableError("The tool provider's auth secret cannot be decrypted; set it again");
    }
    return secret;
  }

  private table(): Promise<ProviderRecord[]> {
    return this.cache.getOrLoad(ALL, async () => {
      const rows = await this.ctx.db.selectFrom('tool_providers').selectAll().execute();
      return rows.map(toProviderRecord).sort(routingOrder);
    });
  }
}

/** The read model of a row: `authSecretSealed` never leaves through the API shapes (`toToolProvider`). */
export function toProviderRecord(row: ToolProviderRow): ProviderRecord {
  return {
    id: row.id,
    name: row.name,
    pattern: row.pattern,
    endpoint: row.endpoint,
    authType: row.auth_type,
    priority: row.priority,
    description: row.description,
    tenantId: row.tenant_id,
    authSecretSealed: row.auth_secret_enc,
  };
}
