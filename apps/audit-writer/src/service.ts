import { defineService } from '@agentgw/service-kit';
import { createAuditConsumer } from './audit-consumer.js';
import { auditRoutes } from './audit.routes.js';

/** audit-writer: consumes the audit queue in batches and answers audit queries. */
export const auditWriterService = defineService({
  name: 'audit-writer',
  defaultPort: 7606,
  create: (deps) => {
    const consumer = createAuditConsumer({
      db: deps.db,
      queue: deps.queue,
      clock: deps.clock,
      logger: deps.logger,
      batchSize: deps.config.AUDIT_BATCH_SIZE,
      batchWaitMs: deps.config.AUDIT_BATCH_WAIT_MS,
      retentionDays: deps.config.AUDIT_RETENTION_DAYS,
      // PostgreSQL's autovacuum reclaims what retention deletes; the embedded engine has none.
      reclaimAfterRetention: deps.dbHandle.kind === 'pglite',
      // PGlite is one connection: concurrent batches would only queue behind each other.
      concurrency: deps.dbHandle.kind === 'postgres' ? deps.config.AUDIT_WRITE_CONCURRENCY : 1,
    });
    return { routes: auditRoutes(deps), start: consumer.start, stop: consumer.stop };
  },
});
