import { sql, type Expression, type ExpressionBuilder, type SqlBool, type StringReference } from 'kysely';
import { ForbiddenError } from '@agentgw/core';
import { hasActingUser, type Principal } from './principal.js';

/**
 * Tenancy rules, decided here and nowhere else:
 * - a resource with tenant null is global: visible to everyone, and only an admin creates or
 *   changes one;
 * - `admin` sees and writes every tenant;
 * - everyone else sees global resources plus their scope (`tenantScope`), and writes only into
 *   their scope. A non-admin without a tenant has a private scope of their own
 *   (`private:<userId>`), so what they create is theirs (and admins'), never global.
 */
export const isAdmin = (principal: Principal): boolean => principal.roles.includes('admin');

/** Tenant id prefix of the private scope of a user without a tenant. */
export const PRIVATE_SCOPE_PREFIX = 'private:';

/** The private scope of a tenant-less user: the tenant id stored on what they create. */
export const privateScope = (userId: string): string => `${PRIVATE_SCOPE_PREFIX}${userId}`;

/**
 * The tenant a principal acts in: its tenant, else (a non-admin user without one) its private
 * scope, else null (an admin acting globally, or a caller with neither user nor tenant, who
 * then sees only global resources and creates nothing).
 */
export function tenantScope(principal: Principal): string | null {
  if (principal.tenantId !== null) return principal.tenantId;
  if (isAdmin(principal) || !hasActingUser(principal)) return null;
  return privateScope(principal.userId);
}

/** Whether the principal may see (and use) a resource stored under `tenantId`. */
export function isVisibleTo(principal: Principal, tenantId: string | null): boolean {
  return isAdmin(principal) || tenantId === null || tenantId === tenantScope(principal);
}

/** Whether the principal may change a resource it can see: admins anything, others only their scope's. */
export function isWritableBy(principal: Principal, tenantId: string | null): boolean {
  return isAdmin(principal) || (tenantId !== null && tenantId === tenantScope(principal));
}

/**
 * Tenant to store on a resource the principal creates. Admins choose (null = global); everyone
 * else is pinned to their scope, and asking for another tenant is refused.
 */
export function writeTenant(principal: Principal, requestedTenantId: string | null | undefined): string | null {
  if (isAdmin(principal)) return requestedTenantId ?? null;
  const scope = tenantScope(principal);
  if (scope === null) throw new ForbiddenError('Only an admin can create global resources', 'TENANT_FORBIDDEN');
  if (requestedTenantId != null && requestedTenantId !== scope) {
    throw new ForbiddenError('Cannot act in another tenant', 'TENANT_FORBIDDEN');
  }
  return scope;
}

export type TenantFilter = { all: true } | { all: false; tenants: string[]; includeGlobal: true };

/** The tenants a principal may read, for code that builds its own queries or filters in memory. */
export function visibleTenantFilter(principal: Principal): TenantFilter {
  if (isAdmin(principal)) return { all: true };
  const scope = tenantScope(principal);
  return { all: false, tenants: scope === null ? [] : [scope], includeGlobal: true };
}

/**
 * Kysely condition applying the visibility rule to `column`:
 * `db.selectFrom('agents').where((eb) => whereTenantVisible(eb, principal, 'agents.tenant_id'))`.
 */
export function whereTenantVisible<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  principal: Principal,
  column: StringReference<DB, TB>,
): Expression<SqlBool> {
  const filter = visibleTenantFilter(principal);
  if (filter.all) return sql<SqlBool>`true`;
  const ref = eb.ref(column);
  const global = sql<SqlBool>`${ref} is null`;
  if (filter.tenants.length === 0) return global;
  return eb.or([global, sql<SqlBool>`${ref} in (${sql.join(filter.tenants)})`]);
}

/**
 * Kysely condition for resources the principal manages but does not share downwards (API
 * keys): admins all; anyone else exactly their scope's, so never a global one.
 */
export function whereTenantOwned<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  principal: Principal,
  column: StringReference<DB, TB>,
): Expression<SqlBool> {
  if (isAdmin(principal)) return sql<SqlBool>`true`;
  const scope = tenantScope(principal);
  if (scope === null) return sql<SqlBool>`false`;
  return sql<SqlBool>`${eb.ref(column)} = ${scope}`;
}
