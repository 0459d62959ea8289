import { runService } from '@agentgw/service-kit';
import { vaultService } from './service.js';

// Distributed mode: PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) are required; run `pnpm --filter @agentgw/db migrate` first.
await runService(vaultService);
