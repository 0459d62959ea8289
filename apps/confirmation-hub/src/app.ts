import { createServiceApp, healthRoute, type ServiceDeps } from '@agentgw/service-kit';
import type { Hono } from 'hono';

/** confirmation-hub: confirmations, SSE streams and push delivery. Its routes arrive in later issues; for now it serves `/health`. */
export function createApp(deps: ServiceDeps): Hono {
  const app = createServiceApp({ logger: deps.logger });
  app.route('/', healthRoute('confirmation-hub', deps));
  return app;
}
