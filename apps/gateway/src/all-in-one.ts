import { adminApiService } from '@agentgw/admin-api';
import { auditWriterService } from '@agentgw/audit-writer';
import { confirmationHubService } from '@agentgw/confirmation-hub';
import { invokeProxyService } from '@agentgw/invoke-proxy';
import { mcpGatewayService } from '@agentgw/mcp-gateway';
import { createHost, type Host, type ServiceDefinition, type ServiceDeps } from '@agentgw/service-kit';
import { vaultService } from '@agentgw/vault';
import { DASHBOARD_DIST, mountConsole } from './console-static.js';

/**
 * The six services the all-in-one runs. This app is the one place allowed to import other apps
 * (the lint rule's documented exception): it composes their definitions and nothing else.
 */
export const gatewayServices: readonly ServiceDefinition[] = [
  adminApiService,
  invokeProxyService,
  vaultService,
  mcpGatewayService,
  confirmationHubService,
  auditWriterService,
];

export interface GatewayHostOptions {
  /** The definitions to run (default: the six). */
  services?: readonly ServiceDefinition[];
  /** The built web console served at `/` when it exists (default: apps/dashboard/dist). */
  consoleDist?: string;
}

/**
 * Every service on one host: one shell (request id, body limit, error body, `/health`), their
 * routes, one OpenAPI document, then the web console for every other GET. Wiring that differs
 * by mode is each definition's own choice (invoke-proxy resolves credentials in-process here
 * because VAULT_URL is unset).
 */
export async function createGatewayHost(deps: ServiceDeps, options: GatewayHostOptions = {}): Promise<Host> {
  const host = await createHost(options.services ?? gatewayServices, deps, { name: 'gateway' });
  mountConsole(host.app, options.consoleDist ?? DASHBOARD_DIST);
  return host;
}
