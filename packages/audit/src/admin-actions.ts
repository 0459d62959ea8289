import type { AuditOpenEntry } from './trail.js';

/**
 * The `toolName` namespace of admin actions. MCP tool names are `[A-Za-z0-9_.-]`, so an entry
 * named `admin:…` is never mistaken for a call of a tool (nor a call for an admin action).
 */
export const ADMIN_ACTION_PREFIX = 'admin:';

/** The admin actions the audit log records: every change the admin API makes to what callers may reach and who may act. */
export type AdminAction =
  | 'tool_definition_approved'
  | 'tool_definition_blocked'
  | 'tool_pinning_set'
  | 'tool_provider_created'
  | 'tool_provider_updated'
  | 'tool_provider_deleted'
  | 'provider_access_created'
  | 'provider_access_updated'
  | 'provider_access_deleted'
  | 'agent_access_replaced'
  | 'agent_created'
  | 'agent_updated'
  | 'agent_deleted'
  | 'agent_disabled'
  | 'agent_enabled'
  | 'agent_token_regenerated'
  | 'credential_provider_created'
  | 'credential_provider_updated'
  | 'credential_provider_deleted'
  | 'api_key_created'
  | 'api_key_revoked'
  | 'user_created'
  | 'user_updated'
  | 'user_deleted'
  | 'user_role_added'
  | 'user_role_removed';

/** Who did what to which provider, and what the action needs said beside it (a hash, a mode, the id acted on; never a secret). */
export interface AdminActionInput {
  /** The signed-in admin (the routes take only user JWTs, so never null in practice). */
  adminId: string | null;
  action: AdminAction;
  /** The provider acted on (or whose pin or rule it is); null when the action concerns none (an agent, a user, an API key). */
  providerId: string | null;
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
