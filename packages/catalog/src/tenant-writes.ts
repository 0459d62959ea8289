import { isAdmin, type Principal } from '@agentgw/auth';
import { ForbiddenError } from '@agentgw/core';

/**
 * Whether a visible resource may also be changed: admins change anything; everyone else only
 * resources of their own tenant. Global (null-tenant) resources are shared by every tenant, so
 * only an admin changes them (403 for others, who can see them, so 404 would be a lie).
 */
export function assertTenantWritable(principal: Principal, tenantId: string | null, what: string): void {
  if (isAdmin(principal)) return;
  if (tenantId === null || tenantId !== principal.tenantId) {
    throw new ForbiddenError(`Only an admin can change this ${what}: it is global or belongs to another tenant`);
  }
}
