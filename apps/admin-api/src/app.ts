import { errorHandler, notFoundHandler } from '@agentgw/core';
import type { ServiceDeps } from '@agentgw/service-kit';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { agentsRoutes } from './agents.routes.js';
import { apiKeysRoutes } from './api-keys.routes.js';
import { authRoutes } from './auth.routes.js';
import { credentialProvidersRoutes } from './credential-providers.routes.js';
import { devicesRoutes } from './devices.routes.js';
import { mountOpenApi } from './openapi.js';
import { providerAccessRoutes } from './provider-access.routes.js';
import { toolProvidersRoutes } from './tool-providers.routes.js';
import { usersRoutes } from './users.routes.js';
import { openApiApp } from './route-kit.js';

/** admin-api: accounts, users, agents, API keys, providers, access rules, credential providers, devices. */
export function createApp(deps: ServiceDeps): OpenAPIHono {
  const app = openApiApp();
  // Own error handling, so the app answers the one error body even when not mounted in a service app (tests).
  app.onError(errorHandler(deps.logger));
  app.notFound(notFoundHandler);
  app.route('/api/v1/auth', authRoutes(deps));
  app.route('/api/v1/admin/users', usersRoutes(deps));
  app.route('/api/v1/admin/agents', agentsRoutes(deps));
  app.route('/api/v1/admin/api-keys', apiKeysRoutes(deps));
  app.route('/api/v1/admin/tool-providers', toolProvidersRoutes(deps));
  app.route('/api/v1/admin/provider-access', providerAccessRoutes(deps));
  app.route('/api/v1/credential-providers', credentialProvidersRoutes(deps));
  app.route('/api/v1/notifications/devices', devicesRoutes(deps));
  mountOpenApi(app);
  return app;
}
