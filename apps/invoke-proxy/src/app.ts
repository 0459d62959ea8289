import { egressPolicyFromConfig } from '@agentgw/core';
import { createCatalog } from '@agentgw/catalog';
import type { CredentialResolver } from '@agentgw/credentials';
import { createServiceApp, DEFAULT_MAX_BODY_BYTES, type ServiceDeps } from '@agentgw/service-kit';
import type { Hono } from 'hono';
import { agentsRoutes } from './agents.routes.js';
import { UpstreamClient } from './upstream-client.js';

export type InvokeProxyDeps = ServiceDeps & { credentials: CredentialResolver };

export interface InvokeProxyOptions {
  /** Wait for the upstream's response headers this long, then answer 504 (default 60 s). */
  upstreamTimeoutMs?: number;
  /** Longest silence inside an upstream body, SSE included, before the call fails (default 5 min). */
  upstreamBodyTimeoutMs?: number;
  /** Largest invoke body accepted; larger is 413 (default 1 MiB). */
  maxRequestBytes?: number;
  /** Largest non-SSE upstream answer that is wrapped; larger is 502 (default 10 MiB). */
  maxResponseBytes?: number;
  /** How long an agent stays cached when no `agent.changed` event arrives (default 30 s). */
  agentCacheTtlMs?: number;
}

export const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;

/** invoke-proxy: invoke an agent's runtime as a user, pre-check credentials, public agent info. */
export function createApp(deps: InvokeProxyDeps, options: InvokeProxyOptions = {}): Hono {
  const catalog = createCatalog(deps, { agentTtlMs: options.agentCacheTtlMs });
  // Until the service definition's start()/stop() own it: an unstarted catalog reads through to the database, never stale.
  catalog.start().catch((err: unknown) => deps.logger.error({ err }, 'invoke-proxy could not subscribe the catalog to its events'));
  const { agents } = catalog;
  const upstream = new UpstreamClient({
    headersTimeoutMs: options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
    bodyTimeoutMs: options.upstreamBodyTimeoutMs ?? 5 * 60_000,
    maxResponseBytes: options.maxResponseBytes ?? 10 * 1024 * 1024,
  }, egressPolicyFromConfig(deps.config));
  const app = createServiceApp({ logger: deps.logger, maxBodyBytes: options.maxRequestBytes ?? DEFAULT_MAX_BODY_BYTES });
  app.route('/api/v1/agents', agentsRoutes({ agents, upstream, auth: deps.auth, credentials: deps.credentials, logger: deps.logger }));
  return app;
}
