import { sql, type Expression, type ExpressionBuilder, type SqlBool, type StringReference } from 'kysely';
import { ForbiddenError } from '@agentgw/core';
import type { Principal } from './principal.js';

/**
 * Tenancy rules: a resource with tenant null is global and visible to everyone; `admin` sees
 * and writes every tenant; everyone else sees their own tenant plus global resources and
 * writes only into their own tenant.
 */
export const isAdmin = (principal: Principal): boolean => principal.roles.includes('admin');

export function isVisibleTo(principal: Principal, tenantId: string | null): boolean {
  return isAdmin(principal) || tenantId === null || tenantId === principal.tenantId;
}

/**
 * Tenant to store on a resource the principal creates. Admins choose (null = global); everyone
 * else is pinned to their own tenant and asking for another one is refused.
 */
export function writeTenant(principal: Principal, requestedTenantId: string | null | undefined): string | null {
  if (isAdmin(principal)) return requestedTenantId ?? null;
  if (requestedTenantId != null && requestedTenantId !== principal.tenantId) {
    throw new ForbiddenError('Cannot act in another tenant', 'TENANT_FORBIDDEN');
  }
  return principal.tenantId;
}

export type TenantFilter = { all: true } | { all: false; tenants: string[]; includeGlobal: true };

/** The tenants a principal may read, for code that builds its own queries or filters in memory. */
export function visibleTenantFilter(principal: Principal): TenantFilter {
  if (isAdmin(principal)) return { all: true };
  return { all: false, tenants: principal.tenantId === null ? [] : [principal.tenantId], includeGlobal: true };
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
