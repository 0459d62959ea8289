/**
 * The `mcp_oauth` line of a tool-provider card: whose token goes upstream and how the gateway got
 * its client at the upstream's authorization server (the `clientRegistration` admin-api saved in
 * the service type's oauth2 credential provider). Kept apart from the page so it can be tested.
 */
import type { CredentialProvider, ToolProvider } from '../types.js';

const CLIENT_WAYS: ReadonlyMap<string, string> = new Map([
  ['client_id_metadata_document', "the gateway's client ID metadata document (public client, nothing registered)"],
  ['dynamic_registration', 'registered by the gateway (RFC 7591)'],
  ['manual', 'entered by an admin'],
]);

/** One line for an `mcp_oauth` card; the client part is left out while the credential providers are unknown or say nothing. */
export function describeMcpOAuth(
  provider: Pick<ToolProvider, 'credentialServiceType'>,
  credentialProviders: readonly CredentialProvider[] | undefined,
): string {
  const serviceType = provider.credentialServiceType ?? '?';
  const line = `mcp_oauth: each user's own ${serviceType} token (MCP authorization)`;
  const saved = credentialProviders?.find(
    (c) => c.serviceType === provider.credentialServiceType && c.authType === 'oauth2',
  );
  const way = saved?.config.clientRegistration;
  const client = typeof way === 'string' ? CLIENT_WAYS.get(way) : undefined;
  return client === undefined ? line : `${line}; client: ${client}`;
}
