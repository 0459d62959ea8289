import { createServiceApp, healthRoute, type ServiceDeps } from '@agentgw/service-kit';
import type { Hono } from 'hono';
import { credentialsRoutes } from './credentials.routes.js';
import { internalRoutes } from './internal.routes.js';
import { createVault } from '@agentgw/credentials';

/** vault: users' credentials (encrypted at rest) and the internal resolve API for invoke-proxy. */
export function createApp(deps: ServiceDeps): Hono {
  const vault = createVault(deps);
  const app = createServiceApp({ logger: deps.logger });
  app.route('/', healthRoute('vault', deps));
  app.route('/api/v1/credentials', credentialsRoutes(deps, vault));
  app.route('/internal/v1', internalRoutes(deps, vault));
  return app;
}
