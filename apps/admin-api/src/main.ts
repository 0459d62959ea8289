import { runService } from '@agentgw/service-kit';
import { createApp } from './app.js';
import { ensureBootstrapAdmin } from './bootstrap-admin.js';

// Distributed mode: PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) are required; run `pnpm --filter @agentgw/db migrate` first.
await runService({
  service: 'admin-api',
  defaultPort: 7601,
  createApp: async (deps) => {
    await ensureBootstrapAdmin(deps);
    return createApp(deps);
  },
});
