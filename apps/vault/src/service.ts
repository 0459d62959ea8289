import { createVault } from '@agentgw/credentials';
import { defineService, openApiApp } from '@agentgw/service-kit';
import { credentialsRoutes } from './credentials.routes.js';
import { internalRoutes } from './internal.routes.js';

/** vault: users' credentials (encrypted at rest) and the internal resolve API for invoke-proxy. */
export const vaultService = defineService({
  name: 'vault',
  defaultPort: 7604,
  create(deps) {
    const vault = createVault(deps);
    const routes = openApiApp();
    routes.route('/api/v1/credentials', credentialsRoutes(deps, vault));
    routes.route('/internal/v1', internalRoutes(deps, vault));
    return { routes };
  },
});
