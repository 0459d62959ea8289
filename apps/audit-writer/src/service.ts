import { defineService } from '@agentgw/service-kit';
import { Hono } from 'hono';

/** audit-writer: consumes the audit queue in batches and answers audit queries. */
export const auditWriterService = defineService({
  name: 'audit-writer',
  defaultPort: 7606,
  create: () => ({ routes: new Hono() }),
});
