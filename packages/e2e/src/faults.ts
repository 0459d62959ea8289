import type { SuiteContext } from './suite.js';
import type { DistributedTarget } from './targets.js';

/** The distributed fault runs (filled in below). */
export function describeFaultRuns(_ctx: () => SuiteContext & { target: DistributedTarget }): void {}
