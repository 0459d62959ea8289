import { createServiceApp, healthRoute, type ServiceDeps } from '@agentgw/service-kit';
import type { Hono } from 'hono';

/** mcp-gateway: the unified MCP endpoint, the per-provider MCP proxy and the tool-gate. Its routes arrive in later issues; for now it serves `/health`. */
export function createApp(deps: ServiceDeps): Hono {
  const app = createServiceApp({ logger: deps.logger });
  app.route('/', healthRoute('mcp-gateway', deps));
  return app;
}
