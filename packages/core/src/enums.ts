/**
 * The closed vocabularies several packages share, each declared once as a `const` tuple: the
 * type is derived from it here, zod schemas from it in `enum-schemas.ts`, database column types
 * and route schemas from those. No imports, so the browser dashboard can use it as it is
 * (`@agentgw/core/enums`).
 */

/** How dangerous a tool call is judged to be (policy, confirmations, audit). */
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
/** One of RISK_LEVELS. */
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** What an access rule or the default policy does with a tool call. */
export const POLICY_ACTIONS = ['allow', 'deny', 'require_confirmation'] as const;
/** One of POLICY_ACTIONS. */
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** Where an audited tool call stands (audit_logs.status). */
export const AUDIT_STATUSES = ['pending', 'confirmed', 'rejected', 'completed', 'failed'] as const;
/** One of AUDIT_STATUSES. */
export type AuditStatus = (typeof AUDIT_STATUSES)[number];

/** Where a held call's confirmation stands (confirmations.status). */
export const CONFIRMATION_STATUSES = ['pending', 'confirmed', 'rejected', 'expired', 'consumed'] as const;
/** One of CONFIRMATION_STATUSES. */
export type ConfirmationStatus = (typeof CONFIRMATION_STATUSES)[number];

/** The ways a pending confirmation ends (the subset of CONFIRMATION_STATUSES an answer or a timeout sets). */
export const CONFIRMATION_OUTCOMES = [
  'confirmed',
  'rejected',
  'expired',
] as const satisfies readonly ConfirmationStatus[];
/** One of CONFIRMATION_OUTCOMES. */
export type ConfirmationOutcome = (typeof CONFIRMATION_OUTCOMES)[number];

/**
 * Where a held call's confirmation may be answered: the console (and the hub's API, always),
 * the caller's own MCP client (elicitation, an opt-in per rule), a push to the confirmer's devices.
 */
export const CONFIRMATION_CARRIERS = ['console', 'client', 'push'] as const;
/** One of CONFIRMATION_CARRIERS. */
export type ConfirmationCarrier = (typeof CONFIRMATION_CARRIERS)[number];

/** What the unified MCP endpoint lists for an agent: every tool it may call, or only the search meta-tools (`search_tools`, `call_tool`). */
export const TOOL_SURFACES = ['all', 'search'] as const;
/** One of TOOL_SURFACES. */
export type ToolSurface = (typeof TOOL_SURFACES)[number];

/** How a provider's tool definitions are pinned: not at all, automatically the first time each is seen, or only when an admin approves it. */
export const TOOL_PINNING_MODES = ['off', 'first_sight', 'approval'] as const;
/** One of TOOL_PINNING_MODES. */
export type ToolPinningMode = (typeof TOOL_PINNING_MODES)[number];

/** Where a tool's pin stands (tool_pins.status): served as pinned; quarantined as never approved, as changed since its pin, or kept blocked by an admin. */
export const TOOL_PIN_STATUSES = ['pinned', 'new', 'changed', 'blocked'] as const;
/** One of TOOL_PIN_STATUSES. */
export type ToolPinStatus = (typeof TOOL_PIN_STATUSES)[number];

/** What happened to a tool pin (the `tool_pins.changed` event): pinned on first sight, a definition quarantined, approved, kept blocked, the upstream went back to the pin, a provider's mode changed. */
export const TOOL_PIN_CHANGES = ['pinned', 'quarantined', 'approved', 'blocked', 'reverted', 'mode'] as const;
/** One of TOOL_PIN_CHANGES. */
export type ToolPinChange = (typeof TOOL_PIN_CHANGES)[number];

/** How a caller proved who it is: user JWT (or console cookie), API key, agent runtime token, session token. */
export const PRINCIPAL_VIAS = ['jwt', 'api_key', 'runtime_token', 'session_token', 'oauth'] as const;
/** One of PRINCIPAL_VIAS. */
export type PrincipalVia = (typeof PRINCIPAL_VIAS)[number];

/** Where a user's stored credential stands: usable, past its expiry (and not refreshable), or refused by its server (reconnect). */
export const CREDENTIAL_STATUSES = ['connected', 'expired', 'needs_reconnect'] as const;
/** One of CREDENTIAL_STATUSES. */
export type CredentialStatus = (typeof CREDENTIAL_STATUSES)[number];
