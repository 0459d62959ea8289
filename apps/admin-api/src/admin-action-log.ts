import { adminActionEntry, createAuditTrail, type AdminAction, type AuditTrail } from '@agentgw/audit';
import type { Principal } from '@agentgw/auth';
import type { ServiceDeps } from '@agentgw/service-kit';

/** What an admin action touched: the provider (if any), the tenant it belongs to, and ids and field names (never a secret). */
export interface AdminActionSubject {
  providerId: string | null;
  tenantId: string | null;
  details: Record<string, unknown>;
}

/** Records a succeeded admin action of `principal` in the audit log (awaited: the admin is answered once it is queued). */
export type AdminActionLog = (principal: Principal, action: AdminAction, subject: AdminActionSubject) => Promise<void>;

/**
 * The one way the admin routes audit what they changed, as pin decisions are: an `admin:<action>`
 * entry with the admin as the acting user and no end user. Routes call it after the change
 * succeeded, with ids and the names of changed fields only, so no token, key or client secret
 * reaches the log (the audit's masking is a second guard, not the first).
 */
export function adminActionLog(
  deps: Pick<ServiceDeps, 'queue' | 'clock'>,
  audit: AuditTrail = createAuditTrail({ queue: deps.queue, clock: deps.clock }),
): AdminActionLog {
  return async (principal, action, { providerId, tenantId, details }) => {
    await audit.open(adminActionEntry({ adminId: principal.userId, action, providerId, tenantId, details }));
  };
}

/** The names of the fields a patch set (what changed, without the values: a value may be a secret). */
export const changedFields = (patch: object): string[] =>
  Object.entries(patch)
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name)
    .sort();
