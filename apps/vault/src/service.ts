import { createOAuthConnect, createVault, createVaultOAuth } from '@agentgw/credentials';
import { defineService, openApiApp, type ServiceDefinition } from '@agentgw/service-kit';
import { credentialsRoutes } from './credentials.routes.js';
import { internalRoutes } from './internal.routes.js';

/**
 * The vault's routes; `internalApi` adds `/internal/v1/*` (service-token resolve), which only a
 * vault on its own listener serves: a host that also faces the public must not carry it.
 */
function defineVault(internalApi: boolean): ServiceDefinition {
  return defineService({
    name: 'vault',
    defaultPort: 7604,
    create(deps) {
      const oauth = createVaultOAuth(deps);
      const vault = createVault({ ...deps, oauth });
      const connect = createOAuthConnect({ db: deps.db, config: deps.config, clock: deps.clock, vault, oauth });
      const routes = openApiApp();
      routes.route('/api/v1/credentials', credentialsRoutes(deps, vault, connect));
      if (internalApi) routes.route('/internal/v1', internalRoutes(deps, vault));
      return { routes, stop: () => oauth.close() };
    },
  });
}

/** vault (distributed mode): users' credentials (encrypted at rest) and the internal resolve API for invoke-proxy. */
export const vaultService = defineVault(true);

/** vault inside the all-in-one: the public credential routes only (invoke-proxy resolves in-process there). */
export const vaultPublicService = defineVault(false);
