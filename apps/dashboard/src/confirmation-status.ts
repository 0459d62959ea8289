import type { PendingConfirmation } from './confirmation-stream.js';

/** The reason the hub stores on a held call nobody answered in time (packages/confirmations, TIMEOUT_REASON). */
const TIMED_OUT = 'Request timed out.';

/** A history filter: the stored status and what the page calls it. */
export const HISTORY_FILTERS = [
  { value: 'consumed', label: 'approved and run' },
  { value: 'confirmed', label: 'approved, not run yet' },
  { value: 'rejected', label: 'rejected or timed out' },
  { value: 'expired', label: 'expired (the caller went away)' },
  { value: 'pending', label: 'waiting' },
] as const;

/**
 * The status a person reads: a timeout is stored as `rejected` with the timeout reason (the
 * spec's shape), but nobody rejected it; approved calls end as `consumed` once they ran.
 */
export function statusLabel(c: Pick<PendingConfirmation, 'status' | 'reason'>): string {
  if (c.status === 'rejected' && c.reason === TIMED_OUT) return 'expired (timed out)';
  if (c.status === 'consumed') return 'approved, ran';
  if (c.status === 'confirmed') return 'approved';
  return c.status;
}
