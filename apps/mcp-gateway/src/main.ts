import { runService } from '@agentgw/service-kit';
import { createApp } from './app.js';

// Distributed mode: PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) are required; run `pnpm --filter @agentgw/db migrate` first.
await runService({ service: 'mcp-gateway', defaultPort: 7603, createApp });
