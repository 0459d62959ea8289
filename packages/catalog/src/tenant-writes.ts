import { isWritableBy, type Principal } from '@agentgw/auth';
import { ForbiddenError } from '@agentgw/core';

/**
 * Whether a visible resource may also be changed (`isWritableBy`): admins change anything;
 * everyone else only resources of their own scope. Global (null-tenant) resources are shared by
 * every tenant, so only an admin changes them (403 for others, who can see them, so 404 would be a lie).
 */
export function assertTenantWritable(principal: Principal, tenantId: string | null, what: string): void {
  if (!isWritableBy(principal, tenantId)) {
    throw new ForbiddenError(`Only an admin can change this ${what}: it is global or belongs to another tenant`);
  }
}
