import type { AuditOpenEntry } from './trail.js';

/**
 * The `toolName` namespace of admin actions. MCP tool names are `[A-Za-z0-9_.-]`, so an entry
 * named `admin:…` is never mistaken for a call of a tool (nor a call for an admin action).
 */
export const ADMIN_ACTION_PREFIX = 'admin:';

/** The admin actions the audit log records. */
export type AdminAction = 'tool_definition_approved' | 'tool_definition_blocked' | 'tool_pinning_set';

/** Who did what to which provider, and what the action needs said beside it (a hash, a mode). */
export interface AdminActionInput {
  /** The signed-in admin (the routes take only user JWTs, so never null in practice). */
  adminId: string | null;
  action: AdminAction;
  providerId: string;
  tenantId: string | null;
  details: Record<string, unknown>;
}

/**
 * An admin action as an audit entry: the admin as the acting user with no agent and no end user
 * (nobody called a tool), the action as `admin:<action>`, and what it acted on in `arguments`.
 */
export function adminActionEntry(input: AdminActionInput): AuditOpenEntry {
  return {
    userId: input.adminId,
    agentId: null,
    endUserId: null,
    providerId: input.providerId,
    tenantId: input.tenantId,
    toolName: `${ADMIN_ACTION_PREFIX}${input.action}`,
    arguments: input.details,
    status: 'completed',
    error: null,
  };
}
