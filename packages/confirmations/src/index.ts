export { callHash } from './call-hash.js';
export { canSeeConfirmation, whereConfirmationVisible } from './visibility.js';
export type { ConfirmationParties, Viewer } from './visibility.js';
export {
  findConfirmation,
  insertPending,
  listPendingVisible,
  listVisible,
  toConfirmation,
  toPayload,
} from './confirmation-records.js';
export type { Confirmation, ListQuery } from './confirmation-records.js';
export {
  abandonConfirmation,
  AGENT_DISABLED_REASON,
  agentIsActive,
  APPROVAL_SPENT_REASON,
  CANCELLED_REASON,
  CALLER_GONE_REASON,
  consumeConfirmation,
  decideConfirmation,
  DEFAULT_REJECT_REASON,
  EXPIRED_REASON,
  expireConfirmation,
  markCallerGone,
  rejectForInactiveAgent,
  rejectIfAgentInactive,
  resolvedEvent,
  SHUTDOWN_REASON,
  spendApproval,
  TIMEOUT_REASON,
  timeOutConfirmation,
  timeoutJobId,
} from './decisions.js';
export type { ConfirmationDeps, DecisionResult, Waiting } from './decisions.js';
export { answerConfirmation, getVisibleConfirmation } from './confirmation-answers.js';
export type { AnswerResult } from './confirmation-answers.js';
export { answerFromClient } from './client-answers.js';
export { recordAuditOutcome } from './audit-outcome.js';
export { createConfirmationGate } from './confirmation-gate.js';
export type { ConfirmationGateHandle, ConfirmationGateOptions } from './confirmation-gate.js';
export { consumeConfirmationTimeouts } from './timeouts.js';
export { insertPendingWithinCaps, maxPendingOf } from './pending-caps.js';
export type { PendingCaps } from './pending-caps.js';
export { consumeConfirmationRetention, CONFIRMATION_RETENTION_INTERVAL_MS, pruneConfirmations } from './retention.js';
