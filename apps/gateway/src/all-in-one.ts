import { createApp as createAdminApi } from '@agentgw/admin-api';
import { createApp as createAuditWriter } from '@agentgw/audit-writer';
import { createApp as createConfirmationHub } from '@agentgw/confirmation-hub';
import { createApp as createInvokeProxy } from '@agentgw/invoke-proxy';
import { createApp as createMcpGateway } from '@agentgw/mcp-gateway';
import { createServiceApp, healthRoute, type ServiceDeps } from '@agentgw/service-kit';
import { createVault, directCredentialResolver } from '@agentgw/credentials';
import { createApp as createVaultApp } from '@agentgw/vault';
import type { Hono } from 'hono';

/**
 * Every service's routes on one Hono, with in-process wiring where the distributed services
 * talk over HTTP: invoke-proxy resolves credentials by calling the vault directly. Each
 * service app carries full `/api/v1/...` paths, so they all mount at `/`; the one `/health`
 * is registered first and answers for the whole process.
 */
export function createGatewayApp(deps: ServiceDeps): Hono {
  const app = createServiceApp({ logger: deps.logger });
  app.route('/', healthRoute('gateway', deps));
  app.route('/', createAdminApi(deps));
  app.route('/', createInvokeProxy({ ...deps, credentials: directCredentialResolver(createVault(deps)) }));
  app.route('/', createMcpGateway(deps));
  app.route('/', createVaultApp(deps));
  app.route('/', createConfirmationHub(deps));
  app.route('/', createAuditWriter(deps));
  return app;
}
