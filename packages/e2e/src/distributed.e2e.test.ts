import { describeFaultRuns } from './faults.js';
import { describeConnectedAccountsSuite } from './connected-accounts.suite.js';
import { describeMcpInteropSuite } from './mcp-interop.suite.js';
import { describeOAuthClientsSuite } from './oauth-clients.suite.js';
import { describeSecuritySuite } from './security.suite.js';
import { describeGatewaySuite } from './suite.js';
import { selected, startDistributedUnderTest, unavailable, type DistributedTarget } from './targets.js';
import { describeToolCatalogSuite } from './tool-catalog.suite.js';

// Every service its own main.ts on PostgreSQL + Redis, two replicas of each but the audit
// writer, behind nginx running infra/nginx/nginx.conf; then issue 19's
// checks, issue 24's, 23's, 21's and 22's through the router (22's refresh race straight to both invoke-proxies), then the fault runs.
const skip = selected('distributed') ? unavailable('distributed') : `E2E_TARGET picks ${process.env.E2E_TARGET} only`;
describeGatewaySuite('distributed', startDistributedUnderTest, skip, (ctx) => {
  describeSecuritySuite(ctx);
  describeToolCatalogSuite(ctx);
  describeOAuthClientsSuite(ctx);
  describeMcpInteropSuite(ctx, {
    replicas: () => (ctx().target as DistributedTarget).services['mcp-gateway'].map((s) => s.url) as [string, string],
  });
  describeConnectedAccountsSuite(ctx, {
    invokeBases: () =>
      (ctx().target as DistributedTarget).services['invoke-proxy'].map((s) => s.url) as [string, string],
  });
  describeFaultRuns(() => ({ ...ctx(), target: ctx().target as DistributedTarget }));
});
