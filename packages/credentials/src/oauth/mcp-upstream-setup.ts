import {
  AppError,
  createEgressDispatcher,
  egressFetch,
  egressPolicyFromConfig,
  type Clock,
  type Config,
} from '@agentgw/core';
import { oauthCallbackUrl } from '../auth-urls.js';
import { AuthorizationServers } from './authorization-server.js';
import { boundedFetch } from './bounded-fetch.js';
import {
  acceptsClientMetadataDocuments,
  discoverMcpUpstream,
  registerGatewayClient,
  upstreamProviderConfig,
  type DiscoveredUpstream,
  type UpstreamClient,
  type UpstreamProviderConfig,
} from './mcp-upstream-discovery.js';
import { upstreamClientDocumentUrl } from './upstream-client-document.js';

/** The largest answer read while discovering (metadata and registration answers are a few KiB). */
const MAX_ANSWER_BYTES = 256 * 1024;

/** A client registered by hand at the upstream's authorization server, entered by an admin when registration is not offered. */
export interface ManualUpstreamClient {
  clientId: string;
  clientSecret: string;
}

/** Refusal naming what the admin must enter: the authorization server would not register the gateway. */
const clientIdRequired = (reason: string) =>
  new AppError(
    400,
    'CLIENT_ID_REQUIRED',
    `The MCP server's authorization server did not register the gateway (${reason}): enter a clientId and clientSecret registered there by hand`,
    {
      reason,
      fields: ['clientId', 'clientSecret'],
    },
  );

/**
 * Turns an MCP upstream protected by the MCP authorization spec into the configuration of the
 * `oauth2` credential provider of `serviceType` (tool providers with `authType: mcp_oauth`):
 * discovery from its 401 / RFC 9728 metadata, then the gateway's client there, in the MCP spec's
 * order of preference: the admin's client, else the gateway's client ID metadata document (public
 * client, PKCE, nothing registered) where the authorization server accepts those, else RFC 7591
 * registration with the vault's callback for that service type. None → 400 CLIENT_ID_REQUIRED.
 */
export async function setUpMcpUpstreamAuth(
  deps: { config: Config; clock: Clock },
  input: { endpoint: string; serviceType: string; client: ManualUpstreamClient | null },
): Promise<UpstreamProviderConfig> {
  const fetch = boundedFetch(
    egressFetch(createEgressDispatcher(egressPolicyFromConfig(deps.config))),
    MAX_ANSWER_BYTES,
  );
  const upstream = await discoverMcpUpstream(fetch, new AuthorizationServers(fetch, deps.clock), input.endpoint);
  const client = await gatewayClientAt(fetch, deps.config, upstream, input);
  if (client.kind === 'client_id_required') throw clientIdRequired(client.reason);
  const config = upstreamProviderConfig(upstream, client);
  return config.scopes.length > 0 ? config : { ...config, scopes: signInScopesOf(upstream.server) };
}

async function gatewayClientAt(
  fetch: typeof globalThis.fetch,
  config: Config,
  upstream: DiscoveredUpstream,
  input: { serviceType: string; client: ManualUpstreamClient | null },
): Promise<UpstreamClient> {
  if (input.client)
    return { kind: 'registered', registration: 'manual', ...input.client, clientAuthMethod: 'client_secret_basic' };
  const documentUrl = upstreamClientDocumentUrl(config);
  if (documentUrl !== null && acceptsClientMetadataDocuments(upstream))
    return { kind: 'metadata_document', clientId: documentUrl };
  return registerGatewayClient(fetch, upstream, {
    redirectUri: oauthCallbackUrl(config, input.serviceType),
    clientName: 'Agent Gateway',
  });
}

/** An upstream naming no scopes: OpenID's `openid` and `offline_access` (for refresh) where its authorization server offers them. */
const signInScopesOf = (server: DiscoveredUpstream['server']): string[] =>
  (server.scopes_supported ?? []).filter((s) => s === 'openid' || s === 'offline_access');
