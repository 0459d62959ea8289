import { describeFaultRuns } from './faults.js';
import { describeGatewaySuite } from './suite.js';
import { selected, startDistributed, unavailable, type DistributedTarget } from './targets.js';

// Every service its own main.ts on PostgreSQL + Redis, two mcp-gateway and two
// confirmation-hub replicas, behind nginx running infra/nginx/nginx.conf; then the fault runs.
const skip = selected('distributed') ? unavailable('distributed') : 'E2E_TARGET picks all-in-one only';
describeGatewaySuite('distributed', startDistributed, skip, (ctx) => describeFaultRuns(() => ({ ...ctx(), target: ctx().target as DistributedTarget })));
