import type { CredentialProviderRow } from './schema.js';

/**
 * The MCP server whose tokens an `mcp_oauth` credential provider holds (its `resource`, RFC 8707),
 * or null for any other provider: set up by discovery, its config carries `clientRegistration`
 * beside `resource`, while a plain `oauth2` provider's `resource` may name an API audience other
 * than the endpoint that receives its tokens.
 */
export function mcpTokenResourceOf(provider: Pick<CredentialProviderRow, 'auth_type' | 'config'>): string | null {
  if (provider.auth_type !== 'oauth2' || !('clientRegistration' in provider.config)) return null;
  const { resource } = provider.config;
  return typeof resource === 'string' ? resource : null;
}

/** Whether a token bound to `resource` may be sent to `endpoint`: the same URL once normalised (an unparsable one never matches). */
export const isSameResource = (resource: string, endpoint: string): boolean =>
  URL.canParse(resource) && URL.canParse(endpoint) && new URL(resource).href === new URL(endpoint).href;
