import { defineService, openApiApp, type ServiceDeps } from '@agentgw/service-kit';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { agentAdminRoutes } from './agents.routes.js';
import { apiKeysRoutes } from './api-keys.routes.js';
import { authRoutes } from './auth.routes.js';
import { credentialProvidersRoutes } from './credential-providers.routes.js';
import { devicesRoutes } from './devices.routes.js';
import { clientAgentsRoutes } from './oauth-server/client-agents.routes.js';
import { startOAuthRowSweeper } from './oauth-server/oauth-row-sweeper.js';
import { oauthServerRoutes } from './oauth-server/oauth-server.routes.js';
import { providerAccessRoutes } from './provider-access.routes.js';
import { toolPinsRoutes } from './tool-pins.routes.js';
import { toolProvidersRoutes } from './tool-providers.routes.js';
import { upstreamClientDocumentRoutes } from './upstream-client-document.routes.js';
import { usersRoutes } from './users.routes.js';

/** admin-api's routes, every one declared with the route kit so the host documents them. */
function adminApiRoutes(deps: ServiceDeps): OpenAPIHono {
  const app = openApiApp();
  app.route('/api/v1/auth', authRoutes(deps));
  app.route('/api/v1/admin/users', usersRoutes(deps));
  app.route('/api/v1/admin/agents', agentAdminRoutes(deps));
  app.route('/api/v1/admin/api-keys', apiKeysRoutes(deps));
  app.route('/api/v1/admin/tool-providers', toolProvidersRoutes(deps));
  app.route('/api/v1/admin/tool-pins', toolPinsRoutes(deps));
  app.route('/api/v1/admin/provider-access', providerAccessRoutes(deps));
  app.route('/api/v1/admin/oauth-client-agents', clientAgentsRoutes(deps));
  app.route('/api/v1/credential-providers', credentialProvidersRoutes(deps));
  app.route('/api/v1/notifications/devices', devicesRoutes(deps));
  // Before the authorization server's /oauth/* (oidc-provider would answer this path 404).
  app.route('/', upstreamClientDocumentRoutes(deps));
  const oauth = oauthServerRoutes(deps);
  app.route('/api/v1/oauth', oauth.console);
  app.route('/', oauth.protocol);
  return app;
}

/** admin-api: accounts, users, agents, API keys, providers, access rules, credential providers, devices. */
export const adminApiService = defineService({
  name: 'admin-api',
  defaultPort: 7601,
  create: (deps) => {
    let sweeper: { stop(): void } | undefined;
    return {
      routes: adminApiRoutes(deps),
      start: async () => void (sweeper = startOAuthRowSweeper(deps)),
      stop: async () => sweeper?.stop(),
    };
  },
});
