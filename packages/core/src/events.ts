import type { RiskLevel, ToolPinChange } from './enums.js';

/**
 * Facts every replica must hear at once, carried by the EventBus (Redis pub/sub in
 * distributed mode, in-process in the all-in-one). Payloads are plain JSON.
 */

export interface ConfirmationPayload {
  id: string;
  tool: { name: string; arguments: Record<string, unknown> };
  risk: { level: RiskLevel };
  providerId: string | null;
  agentId: string | null;
  userId: string | null;
  endUserId: string | null;
  tenantId: string | null;
  timestamp: string;
  expiresAt: string;
}

export interface GatewayEvents {
  /** An agent was updated, disabled, enabled, re-keyed or deleted: drop cached copies. */
  'agent.changed': {
    agentId: string;
    change: 'created' | 'updated' | 'disabled' | 'enabled' | 'token_rotated' | 'deleted';
  };
  /** Tool providers or access rules changed: drop cached provider tables and rule sets. */
  'providers.changed': { providerId: string | null };
  'rules.changed': { subjectType: 'user' | 'agent' | null; subjectId: string | null };
  /** A user's roles, tenant or existence changed: drop cached identity. */
  'user.changed': { userId: string };
  /** A user's stored credentials changed (stored, replaced, deleted, re-sealed): drop cached sealed rows. */
  'credential.changed': { userId: string };
  /** An API key was revoked or created. */
  'apikey.changed': { keyId: string };
  'confirmation.required': ConfirmationPayload;
  'confirmation.resolved': ConfirmationResolved;
  /** A tool definition was pinned, quarantined, approved or kept blocked (or a provider's pinning mode changed): drop cached pins, tell MCP clients their list changed, show admins. */
  'tool_pins.changed': ToolPinEvent;
  /** An OAuth grant (a user's connection of an MCP client) was revoked: its access tokens stop working at once on every replica. */
  'oauth.grant_revoked': { grantId: string };
  /** An admin bound or unbound a user's MCP client(s) to an agent: every replica forgets its cached bindings. */
  'oauth.client_agents_changed': { userId: string };
  /** A legacy MCP session ended (DELETE) or was evicted past its caller's cap: its open server stream ends on whichever replica holds it. */
  'mcp_session.ended': { sid: string };
  /** A legacy session opened an upstream session (a POST on any replica): the session's server stream, on whichever replica holds it, follows that upstream's own stream now instead of at its next read of the session store. */
  'mcp_session.upstream_opened': { sid: string };
  /** A client's answer to a request the gateway bridged was kept in the relay store: the call waiting on it, on whichever replica, reads it now instead of at its next poll. */
  'mcp_relay.answered': { id: string };
  /** A legacy upstream's call bridged for a 2026-07-28 client moved on (another question, or its final answer) in the bridge store: the client's retry waiting on it, on whichever replica, reads it now. */
  'mcp_relay.continued': { id: string };
  /** A paused answer stream (SEP-1699) got an event or its response in the shared store: a resume waiting on it, on whichever replica, reads it now. */
  'mcp_stream.appended': { token: string };
}

/** One tool pin's change, for every replica and the admins' event stream; `toolName` null for a provider-wide change (its mode). */
export interface ToolPinEvent {
  providerId: string;
  tenantId: string | null;
  toolName: string | null;
  change: ToolPinChange;
  /** A quarantined or pinned name that replaced a pinned tool of the same definition. */
  renamedFrom: string | null;
  timestamp: string;
}

/**
 * How a pending confirmation ended, by status: confirmed by someone; rejected with a reason (by
 * a confirmer, or because its agent was disabled); or expired without a decision — its deadline
 * passed (`timeout`, stored as `rejected` with `Request timed out.` as the spec says) or it
 * could not be announced (`unannounced`, stored as `expired`), or the gateway holding its call
 * shut down or crashed before a decision (`shutdown`, stored as `expired`: the call was not run).
 */
export type ConfirmationResolution =
  | { status: 'confirmed'; confirmedBy: string | null }
  | { status: 'rejected'; reason: string }
  | { status: 'expired'; reason: 'timeout' | 'unannounced' | 'shutdown' };

/** Every way a pending confirmation ends, with who may see it. */
export type ConfirmationResolved = ConfirmationResolution & {
  id: string;
  userId: string | null;
  endUserId: string | null;
  tenantId: string | null;
  timestamp: string;
};

export type EventName = keyof GatewayEvents;
