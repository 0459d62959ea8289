import { createServiceApp, healthRoute, type ServiceDeps } from '@agentgw/service-kit';
import type { Hono } from 'hono';

/** audit-writer: the audit log: consumes the audit queue in batches and answers audit queries. Its routes arrive in later issues; for now it serves `/health`. */
export function createApp(deps: ServiceDeps): Hono {
  const app = createServiceApp({ logger: deps.logger });
  app.route('/', healthRoute('audit-writer', deps));
  return app;
}
