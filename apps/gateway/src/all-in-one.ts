import { adminApiService } from '@agentgw/admin-api';
import { auditWriterService } from '@agentgw/audit-writer';
import { confirmationHubService } from '@agentgw/confirmation-hub';
import { invokeProxyService } from '@agentgw/invoke-proxy';
import { mcpGatewayService } from '@agentgw/mcp-gateway';
import { notFoundHandler } from '@agentgw/core';
import { createHost, type Host, type ServiceDefinition, type ServiceDeps } from '@agentgw/service-kit';
import { vaultPublicService } from '@agentgw/vault';
import { DASHBOARD_DIST, mountConsole } from './console-static.js';

/**
 * The six services the all-in-one runs. This app is the one place allowed to import other apps
 * (the lint rule's documented exception): it composes their definitions and nothing else.
 */
export const gatewayServices: readonly ServiceDefinition[] = [
  adminApiService,
  invokeProxyService,
  vaultPublicService,
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
 * because VAULT_URL is unset, so the vault's internal resolve API is not served at all).
 */
export async function createGatewayHost(deps: ServiceDeps, options: GatewayHostOptions = {}): Promise<Host> {
  const host = await createHost(options.services ?? gatewayServices, deps, { name: 'gateway' });
  // Service-to-service routes never face the public: the vault here carries none, and nothing
  // under /internal falls through to the console either (JSON 404, whatever the credentials).
  host.app.all('/internal', notFoundHandler);
  host.app.all('/internal/*', notFoundHandler);
  mountConsole(host.app, options.consoleDist ?? DASHBOARD_DIST);
  return host;
}
