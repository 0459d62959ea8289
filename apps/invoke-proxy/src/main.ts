import { ConfigError } from '@agentgw/core';
import { runService } from '@agentgw/service-kit';
import { httpCredentialResolver } from '@agentgw/credentials';
import { createApp } from './app.js';

// Distributed mode: PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) are required; run `pnpm --filter @agentgw/db migrate` first.
await runService({
  service: 'invoke-proxy',
  defaultPort: 7602,
  createApp: (deps) => {
    // Credentials come from the vault over its internal API; only the vault can decrypt them.
    const vaultUrl = deps.config.VAULT_URL;
    if (!vaultUrl) throw new ConfigError([{ variable: 'VAULT_URL', message: 'is required by invoke-proxy in distributed mode' }]);
    return createApp({ ...deps, credentials: httpCredentialResolver({ baseUrl: vaultUrl, auth: deps.auth }) });
  },
});
