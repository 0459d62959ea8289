import { AppError } from '@agentgw/core';
import * as oauth from 'oauth4webapi';
import { assertSecureUrl, requestOptions, type AuthorizationServers } from './authorization-server.js';

/** What an MCP upstream protected by the MCP authorization spec names: its resource, its authorization server, the scopes it offers. */
export interface DiscoveredUpstream {
  resource: string;
  issuer: string;
  scopes: string[];
  server: oauth.AuthorizationServer;
}

/** How the gateway got its client at an upstream's authorization server (saved so the console can show it). */
export type UpstreamClientRegistration = 'client_id_metadata_document' | 'dynamic_registration' | 'manual';

/** The gateway's client at the upstream's authorization server: registered (RFC 7591 or by an admin), its metadata document, or an admin must enter one. */
export type UpstreamClient =
  | {
      kind: 'registered';
      registration: 'dynamic_registration' | 'manual';
      clientId: string;
      clientSecret: string;
      clientAuthMethod: 'client_secret_basic' | 'client_secret_post';
    }
  | { kind: 'metadata_document'; clientId: string }
  | { kind: 'client_id_required'; reason: string };

/**
 * The stored configuration of the `oauth2` credential provider an upstream becomes (the shape
 * `oauthConfigOf` reads; the client secret still to be sealed by the caller), so each user connects
 * once through the vault's ordinary flow and calls carry that user's token.
 */
export interface UpstreamProviderConfig {
  clientId: string;
  /** Absent for the public client of the gateway's metadata document. */
  clientSecret?: string;
  clientAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  clientRegistration: UpstreamClientRegistration;
  issuer: string;
  resource: string;
  scopes: string[];
}

const discoveryFailed = (why: string) =>
  new AppError(502, 'UPSTREAM_AUTH_DISCOVERY_FAILED', `The MCP server's authorization could not be discovered: ${why}`);
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : 'unknown error');
const SUPPORTED_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

/** RFC 9728 §5.1: the `resource_metadata` parameter of a Bearer challenge, when the 401 carries one. */
export function resourceMetadataUrlOf(wwwAuthenticate: string | null): string | null {
  if (!wwwAuthenticate || !/^\s*Bearer\b/i.test(wwwAuthenticate)) return null;
  return /\bresource_metadata="([^"]+)"/i.exec(wwwAuthenticate)?.[1] ?? null;
}

/**
 * Discovers how an MCP upstream wants to be authorized (MCP authorization spec): the URL named by
 * the `resource_metadata` of its 401, else RFC 9728's well-known locations (path-suffixed, then the
 * root), whose `resource` must be the upstream's URL; then its first authorization server's
 * RFC 8414 / OIDC metadata. Every fetch goes through the given (egress-checked, bounded) fetch.
 */
export async function discoverMcpUpstream(
  fetch: typeof globalThis.fetch,
  servers: AuthorizationServers,
  mcpUrl: string,
): Promise<DiscoveredUpstream> {
  const resourceUrl = assertSecureUrl(mcpUrl, 'the MCP server URL');
  const metadata = await protectedResourceMetadata(fetch, resourceUrl);
  const issuer = metadata.authorization_servers?.[0];
  if (!issuer) throw discoveryFailed('its metadata names no authorization server');
  const server = await servers.resolve({ kind: 'issuer', issuer });
  const scopes = Array.isArray(metadata.scopes_supported)
    ? metadata.scopes_supported.filter((s): s is string => typeof s === 'string')
    : [];
  return { resource: metadata.resource, issuer: server.issuer, scopes, server };
}

async function protectedResourceMetadata(
  fetch: typeof globalThis.fetch,
  resourceUrl: URL,
): Promise<oauth.ResourceServer> {
  const candidates: URL[] = [];
  const probe = await fetch(resourceUrl, {
    method: 'GET',
    headers: { accept: 'application/json, text/event-stream' },
    signal: AbortSignal.timeout(10_000),
  }).catch((err: unknown) => {
    throw discoveryFailed(`the server is unreachable (${messageOf(err)})`);
  });
  await probe.body?.cancel();
  const named = probe.status === 401 ? resourceMetadataUrlOf(probe.headers.get('www-authenticate')) : null;
  if (named) candidates.push(assertSecureUrl(new URL(named, resourceUrl).href, 'resource_metadata'));
  const path = resourceUrl.pathname === '/' ? '' : resourceUrl.pathname;
  candidates.push(new URL(`/.well-known/oauth-protected-resource${path}`, resourceUrl.origin));
  if (path) candidates.push(new URL('/.well-known/oauth-protected-resource', resourceUrl.origin));
  let lastError = 'no protected-resource metadata found';
  for (const url of candidates) {
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
      // The metadata must be about this very server (RFC 9728 §3.3), whichever URL served it.
      return await oauth.processResourceDiscoveryResponse(resourceUrl, response);
    } catch (err) {
      lastError = messageOf(err);
    }
  }
  throw discoveryFailed(lastError);
}

/**
 * Registers the gateway as a confidential client (RFC 7591) when the authorization server offers
 * registration; otherwise (or when it refuses) an admin must enter a client id registered by hand.
 */
export async function registerGatewayClient(
  fetch: typeof globalThis.fetch,
  upstream: DiscoveredUpstream,
  input: { redirectUri: string; clientName: string },
): Promise<UpstreamClient> {
  const as = upstream.server;
  if (!as.registration_endpoint)
    return { kind: 'client_id_required', reason: 'the authorization server offers no dynamic client registration' };
  assertSecureUrl(as.registration_endpoint, 'registration_endpoint');
  const offered = as.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  const method = SUPPORTED_AUTH_METHODS.find((m) => offered.includes(m));
  if (!method)
    return { kind: 'client_id_required', reason: 'the authorization server supports no client secret authentication' };
  try {
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: input.clientName,
        redirect_uris: [input.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: method,
        ...(upstream.scopes.length > 0 && { scope: upstream.scopes.join(' ') }),
      },
      requestOptions(fetch),
    );
    const client = await oauth.processDynamicClientRegistrationResponse(response);
    if (typeof client.client_secret !== 'string' || client.client_secret === '')
      return { kind: 'client_id_required', reason: 'the registration issued no client secret' };
    return {
      kind: 'registered',
      registration: 'dynamic_registration',
      clientId: client.client_id,
      clientSecret: client.client_secret,
      clientAuthMethod: method,
    };
  } catch (err) {
    return {
      kind: 'client_id_required',
      reason: `the registration was refused (${err instanceof oauth.ResponseBodyError ? err.error : messageOf(err)})`,
    };
  }
}

/** The credential provider configuration for the gateway's upstream client: issuer, client (and how it came), the upstream's resource and scopes. */
export const upstreamProviderConfig = (
  upstream: DiscoveredUpstream,
  client: Exclude<UpstreamClient, { kind: 'client_id_required' }>,
): UpstreamProviderConfig => ({
  ...(client.kind === 'registered'
    ? {
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        clientAuthMethod: client.clientAuthMethod,
        clientRegistration: client.registration,
      }
    : { clientId: client.clientId, clientAuthMethod: 'none', clientRegistration: 'client_id_metadata_document' }),
  issuer: upstream.issuer,
  resource: upstream.resource,
  scopes: upstream.scopes,
});

/** Whether the authorization server takes client ID metadata documents as client ids (its metadata says so). */
export const acceptsClientMetadataDocuments = (upstream: DiscoveredUpstream): boolean =>
  upstream.server.client_id_metadata_document_supported === true;
