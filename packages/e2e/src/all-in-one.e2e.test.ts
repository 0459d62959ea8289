import { describeConnectedAccountsSuite } from './connected-accounts.suite.js';
import { describeMcpInteropSuite } from './mcp-interop.suite.js';
import { describeOAuthClientsSuite } from './oauth-clients.suite.js';
import { describeSecuritySuite } from './security.suite.js';
import { describeGatewaySuite } from './suite.js';
import { selected, startAllInOneUnderTest } from './targets.js';
import { describeToolCatalogSuite } from './tool-catalog.suite.js';

// The all-in-one as the README starts it: `pnpm gateway start --port N --data-dir DIR`; then issue 19's checks, then issue 24's, 23's, 21's and 22's.
describeGatewaySuite(
  'all-in-one',
  startAllInOneUnderTest,
  selected('all-in-one') ? null : `E2E_TARGET picks ${process.env.E2E_TARGET} only`,
  (ctx) => {
    describeSecuritySuite(ctx);
    describeToolCatalogSuite(ctx);
    describeOAuthClientsSuite(ctx);
    describeMcpInteropSuite(ctx);
    describeConnectedAccountsSuite(ctx);
  },
);
