export {
  createAuditTrail,
  OUTCOME_WAIT_MS,
  type AuditTrail,
  type AuditOpenEntry,
  type AuditPatch,
  type OpenTiming,
} from './trail.js';
export { ADMIN_ACTION_PREFIX, adminActionEntry, type AdminAction, type AdminActionInput } from './admin-actions.js';
export {
  MASK,
  MAX_BODY_BYTES,
  MAX_DEPTH,
  MAX_ERROR_CHARS,
  SECRET_NAME_PARTS,
  capError,
  cleanString,
  isSecretName,
  maskBody,
  type TruncatedBody,
} from './masking.js';
export type { AuditStatus } from '@agentgw/core';
export {
  IDENTITY_EVENT_TYPES,
  recordIdentityEvent,
  type IdentityEvent,
  type IdentityEventType,
} from './identity-events.js';
