import { CallQuota, callQuotaLimitsFrom, egressPolicyFromConfig } from '@agentgw/core';
import {
  createVault,
  createVaultOAuth,
  directCredentialResolver,
  httpCredentialResolver,
  type CredentialResolver,
} from '@agentgw/credentials';
import {
  DEFAULT_MAX_BODY_BYTES,
  defineService,
  openApiApp,
  type ServiceDefinition,
  type ServiceDeps,
} from '@agentgw/service-kit';
import { agentInvokeRoutes } from './agents.routes.js';
import { SessionTokens } from './session-tokens.js';
import { UpstreamClient } from './upstream-client.js';

/** Where an agent's public routes live: invoke, its public info, its credentials check. */
const AGENTS_PATH = '/api/v1/agents';

export interface InvokeProxyOptions {
  /** Wait for the upstream's response headers this long, then answer 504 (default 60 s). */
  upstreamTimeoutMs?: number;
  /** Longest silence inside an upstream body, SSE included, before the call fails (default 5 min). */
  upstreamBodyTimeoutMs?: number;
  /** Largest invoke body accepted; larger is 413 (default 1 MiB). The host's default limit does not cap it. */
  maxRequestBytes?: number;
  /** Largest non-SSE upstream answer that is wrapped; larger is 502 (default 10 MiB). */
  maxResponseBytes?: number;
  /** Where credentials come from; by default chosen from the config (see `credentialResolverFor`). */
  credentials?: (deps: ServiceDeps) => CredentialResolver;
}

export const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;

/**
 * The vault over its internal API when VAULT_URL is set (distributed: only the vault decrypts),
 * otherwise the vault in this process (the all-in-one), refreshing OAuth tokens as the vault app does.
 */
function credentialResolverFor(deps: ServiceDeps): CredentialResolver {
  const vaultUrl = deps.config.VAULT_URL;
  if (vaultUrl)
    return httpCredentialResolver({ baseUrl: vaultUrl, auth: deps.auth, egress: egressPolicyFromConfig(deps.config) });
  return directCredentialResolver(createVault({ ...deps, oauth: createVaultOAuth(deps) }));
}

/** invoke-proxy with non-default options (tests, benches); `invokeProxyService` is the default. */
export function createInvokeProxyService(options: InvokeProxyOptions = {}): ServiceDefinition {
  return defineService({
    name: 'invoke-proxy',
    defaultPort: 7602,
    hotPaths: [AGENTS_PATH],
    create(deps) {
      const upstream = new UpstreamClient(
        {
          headersTimeoutMs: options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
          bodyTimeoutMs: options.upstreamBodyTimeoutMs ?? 5 * 60_000,
          maxResponseBytes: options.maxResponseBytes ?? 10 * 1024 * 1024,
        },
        egressPolicyFromConfig(deps.config),
      );
      const credentials = options.credentials?.(deps) ?? credentialResolverFor(deps);
      const routes = openApiApp().route(
        AGENTS_PATH,
        agentInvokeRoutes(
          {
            agents: deps.catalog.agents,
            upstream,
            auth: deps.auth,
            credentials,
            logger: deps.logger,
            quota: new CallQuota(deps.rateLimiter, callQuotaLimitsFrom(deps.config)),
            sessionTokens: new SessionTokens(deps.auth, deps.clock),
          },
          { maxRequestBytes: options.maxRequestBytes ?? DEFAULT_MAX_BODY_BYTES },
        ),
      );
      // Agents come from the process's started catalog reader (deps), which hears `agent.changed` (the kill switch).
      return { routes };
    },
  });
}

/** invoke-proxy: invoke an agent's runtime as a user, pre-check credentials, public agent info. */
export const invokeProxyService = createInvokeProxyService();
