/**
 * The bare proxy's CPU per call measured around each gateway window, half just before it and
 * half just after, so that the "× bare" ratio compares the two under the same machine load: on a
 * shared 2-core machine the bare proxy's own CPU per call moved by up to 60% between windows
 * measured minutes apart, and a ratio against a baseline from another minute moved with it.
 * A load that drifts evenly over the three windows cancels out of the sum.
 */
import { perThousand } from './report-lines.js';

/** One bare-proxy window: its CPU seconds and the calls it served (with failures, which must be none). */
export interface BareWindow {
  cpu: number;
  calls: number;
  failures: number;
}

/** The two windows around a gateway window, read as one baseline. */
export interface BareBracket {
  /** CPU-s per 1,000 calls over both windows: the ratio's baseline. */
  perThousand: number;
  before: number;
  after: number;
  failures: number;
}

/** Combines the windows before and after a gateway window into its baseline. */
export function bracket(before: BareWindow, after: BareWindow): BareBracket {
  return {
    perThousand: perThousand(before.cpu + after.cpu, before.calls + after.calls),
    before: perThousand(before.cpu, before.calls),
    after: perThousand(after.cpu, after.calls),
    failures: before.failures + after.failures,
  };
}
