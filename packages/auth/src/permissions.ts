import type { RoleName } from '@agentgw/db';

export const ROLES = ['admin', 'tenant_admin', 'agent_creator'] as const satisfies readonly RoleName[];

export const PERMISSIONS = [
  'agent:create',
  'agent:read',
  'agent:update:own',
  'agent:update:all',
  'agent:delete:own',
  'agent:delete:all',
  'provider:read',
  'provider:create',
  'provider:update',
  'provider:delete',
  'user:manage',
  'apikey:manage',
  'audit:read:all',
  'audit:read:tenant',
  'audit:stats',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Every permission except the named ones: a tenant admin is an admin without the platform-wide powers. */
const allBut = (...excluded: Permission[]): readonly Permission[] => PERMISSIONS.filter((p) => !excluded.includes(p));

/**
 * Role → permissions. `:all` permissions still stop at the caller's tenant unless the caller is
 * `admin`; tenancy is applied by the tenant-scope helpers, not here.
 */
export const ROLE_PERMISSIONS: Record<RoleName, readonly Permission[]> = {
  admin: PERMISSIONS,
  tenant_admin: allBut('user:manage', 'audit:read:all', 'audit:stats'),
  agent_creator: ['agent:create', 'agent:read', 'agent:update:own', 'agent:delete:own', 'provider:read'],
};

export function permissionsOf(roles: readonly RoleName[]): ReadonlySet<Permission> {
  const set = new Set<Permission>();
  for (const role of roles) for (const p of ROLE_PERMISSIONS[role] ?? []) set.add(p);
  return set;
}
