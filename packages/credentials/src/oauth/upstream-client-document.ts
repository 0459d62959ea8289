import type { Config } from '@agentgw/core';
import { oauthCallbackUrl, sharedOAuthCallbackUrl } from '../auth-urls.js';

type DocumentConfig = Pick<Config, 'OAUTH_CALLBACK_BASE_URL' | 'GATEWAY_PUBLIC_URL' | 'PORT'>;

/** Where admin-api serves the gateway's client ID metadata document, under GATEWAY_PUBLIC_URL. */
export const UPSTREAM_CLIENT_DOCUMENT_PATH = '/oauth/upstream-client.json';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * The gateway's `client_id` at upstream authorization servers that accept client ID metadata
 * documents: the document's own URL. Null without a public URL an authorization server could fetch
 * (GATEWAY_PUBLIC_URL unset, or plain http anywhere but loopback, which servers refuse).
 */
export function upstreamClientDocumentUrl(config: DocumentConfig): string | null {
  if (!config.GATEWAY_PUBLIC_URL) return null;
  const base = new URL(config.GATEWAY_PUBLIC_URL);
  if (base.protocol !== 'https:' && !(base.protocol === 'http:' && LOOPBACK_HOSTS.has(base.hostname))) return null;
  return `${config.GATEWAY_PUBLIC_URL.replace(/\/+$/, '')}${UPSTREAM_CLIENT_DOCUMENT_PATH}`;
}

/**
 * The document itself (OAuth Client ID Metadata Document draft, MCP authorization 2025-11-25): a
 * public client (PKCE, no secret) whose only redirect URI is the vault's shared callback, so it
 * stays the same whichever upstreams and service types exist. Null when there is no document URL.
 */
export function upstreamClientDocument(config: DocumentConfig): Record<string, unknown> | null {
  const clientId = upstreamClientDocumentUrl(config);
  if (clientId === null) return null;
  return {
    client_id: clientId,
    client_name: 'Agent Gateway',
    client_uri: config.GATEWAY_PUBLIC_URL,
    redirect_uris: [sharedOAuthCallbackUrl(config)],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** The redirect URI a connection uses: the shared callback for the document's client (the only one it lists), the service type's own otherwise. */
export function redirectUriFor(config: DocumentConfig, client: { clientId: string; serviceType: string }): string {
  return client.clientId === upstreamClientDocumentUrl(config)
    ? sharedOAuthCallbackUrl(config)
    : oauthCallbackUrl(config, client.serviceType);
}
