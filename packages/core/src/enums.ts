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
export const CONFIRMATION_OUTCOMES = ['confirmed', 'rejected', 'expired'] as const satisfies readonly ConfirmationStatus[];
/** One of CONFIRMATION_OUTCOMES. */
export type ConfirmationOutcome = (typeof CONFIRMATION_OUTCOMES)[number];
