import { runService } from '@agentgw/service-kit';
import { createApp } from './app.js';

// Distributed mode: PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) are required; run `pnpm --filter @agentgw/db migrate` first.
await runService({ service: 'audit-writer', defaultPort: 7606, createApp });
