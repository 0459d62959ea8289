import { isAdmin, type Principal } from '@agentgw/auth';
import type { Database } from '@agentgw/db';
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';

/** The parts of a confirmation the visibility rule looks at. */
export interface ConfirmationParties {
  userId: string | null;
  endUserId: string | null;
  tenantId: string | null;
}

/** Who is looking: a request's principal, or an SSE connection's owner. */
export type Viewer = Pick<Principal, 'userId' | 'roles' | 'tenantId'>;

const tenantAdminOf = (viewer: Viewer): string | null =>
  viewer.roles.includes('tenant_admin') ? viewer.tenantId : null;

/**
 * The one visibility rule (spec, Authorization): a confirmation is seen and answered by the user
 * who made the call, the end user it was made for, an `admin`, or a `tenant_admin` of the
 * confirmation's own tenant. A global (tenant null) confirmation has no tenant admin.
 */
export function canSeeConfirmation(viewer: Viewer, confirmation: ConfirmationParties): boolean {
  if (isAdmin(viewer as Principal)) return true;
  if (viewer.userId !== null && (confirmation.userId === viewer.userId || confirmation.endUserId === viewer.userId))
    return true;
  const tenant = tenantAdminOf(viewer);
  return tenant !== null && confirmation.tenantId === tenant;
}

/** The same rule as a Kysely condition on the `confirmations` table, so lists filter in SQL. */
export function whereConfirmationVisible(
  eb: ExpressionBuilder<Database, 'confirmations'>,
  viewer: Viewer,
): Expression<SqlBool> {
  if (isAdmin(viewer as Principal)) return sql<SqlBool>`true`;
  const ors: Expression<SqlBool>[] = [];
  if (viewer.userId !== null) ors.push(eb('user_id', '=', viewer.userId), eb('end_user_id', '=', viewer.userId));
  const tenant = tenantAdminOf(viewer);
  if (tenant !== null) ors.push(eb('tenant_id', '=', tenant));
  return ors.length === 0 ? sql<SqlBool>`false` : eb.or(ors);
}
