import { describe, expect, it } from 'vitest';
import { HISTORY_FILTERS, statusLabel } from './confirmation-status.js';
import { CONFIRMATION_STATUSES } from './types.js';

describe('statusLabel', () => {
  it('shows a timeout as expired, not rejected, and approved calls as approved', () => {
    expect(statusLabel({ status: 'rejected', reason: 'Request timed out.' })).toBe('expired (timed out)');
    expect(statusLabel({ status: 'rejected', reason: 'not this one' })).toBe('rejected');
    expect(statusLabel({ status: 'rejected', reason: null })).toBe('rejected');
    expect(statusLabel({ status: 'consumed', reason: null })).toBe('approved, ran');
    expect(statusLabel({ status: 'confirmed', reason: null })).toBe('approved');
  });

  it('offers every stored status as a history filter, approved-and-run first', () => {
    expect(HISTORY_FILTERS[0].value).toBe('consumed');
    expect(HISTORY_FILTERS.map((f) => f.value).sort()).toEqual([...CONFIRMATION_STATUSES].sort());
  });
});
