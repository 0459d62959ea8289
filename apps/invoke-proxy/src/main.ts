import { ConfigError } from '@agentgw/core';
import { runService } from '@agentgw/service-kit';
import { invokeProxyService } from './service.js';

// Distributed mode: PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) are required; run `pnpm --filter @agentgw/db migrate` first.
await runService(invokeProxyService, {
  // Credentials come from the vault over its internal API; only the vault may decrypt them here.
  prepare: async (deps) => {
    if (!deps.config.VAULT_URL)
      throw new ConfigError([{ variable: 'VAULT_URL', message: 'is required by invoke-proxy in distributed mode' }]);
  },
});
