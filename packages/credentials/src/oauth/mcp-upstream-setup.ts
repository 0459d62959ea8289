import { AppError, createEgressDispatcher, egressFetch, egressPolicyFromConfig, type Clock, type Config } from '@agentgw/core';
import { oauthCallbackUrl } from '../auth-urls.js';
import { AuthorizationServers } from './authorization-server.js';
import { boundedFetch } from './bounded-fetch.js';
import { discoverMcpUpstream, registerGatewayClient, upstreamProviderConfig, type DiscoveredUpstream, type UpstreamProviderConfig } from './mcp-upstream-discovery.js';

/** The largest answer read while discovering (metadata and registration answers are a few KiB). */
const MAX_ANSWER_BYTES = 256 * 1024;

/** A client registered by hand at the upstream's authorization server, entered by an admin when registration is not offered. */
export interface ManualUpstreamClient {
  clientId: string;
  clientSecret: string;
}

/** Refusal naming what the admin must enter: the authorization server would not register the gateway. */
const clientIdRequired = (reason: string) =>
  new AppError(400, 'CLIENT_ID_REQUIRED', `The MCP server's authorization server did not register the gateway (${reason}): enter a clientId and clientSecret registered there by hand`, {
    reason,
    fields: ['clientId', 'clientSecret'],
  });

/**
 * Turns an MCP upstream protected by the MCP authorization spec into the configuration of the
 * `oauth2` credential provider of `serviceType` (tool providers with `authType: mcp_oauth`):
 * discovery from its 401 / RFC 9728 metadata, then the admin's client or RFC 7591 registration with
 * the vault's callback for that service type as redirect URI. No registration → 400 CLIENT_ID_REQUIRED.
 */
export async function setUpMcpUpstreamAuth(
  deps: { config: Config; clock: Clock },
  input: { endpoint: string; serviceType: string; client: ManualUpstreamClient | null },
): Promise<UpstreamProviderConfig> {
  const fetch = boundedFetch(egressFetch(createEgressDispatcher(egressPolicyFromConfig(deps.config))), MAX_ANSWER_BYTES);
  const upstream = await discoverMcpUpstream(fetch, new AuthorizationServers(fetch, deps.clock), input.endpoint);
  const client = input.client
    ? ({ kind: 'registered', ...input.client, clientAuthMethod: 'client_secret_basic' } as const)
    : await registerGatewayClient(fetch, upstream, { redirectUri: oauthCallbackUrl(deps.config, input.serviceType), clientName: 'Agent Gateway' });
  if (client.kind === 'client_id_required') throw clientIdRequired(client.reason);
  const config = upstreamProviderConfig(upstream, client);
  return config.scopes.length > 0 ? config : { ...config, scopes: signInScopesOf(upstream.server) };
}

/** An upstream naming no scopes: OpenID's `openid` and `offline_access` (for refresh) where its authorization server offers them. */
const signInScopesOf = (server: DiscoveredUpstream['server']): string[] => (server.scopes_supported ?? []).filter((s) => s === 'openid' || s === 'offline_access');
