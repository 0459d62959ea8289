/** The one scope an MCP client asks for: calling the gateway's MCP endpoints as the signed-in user. */
export const MCP_SCOPE = 'mcp';

/** The unified MCP endpoint's path, which lists every provider's tools. */
export const MCP_UNIFIED_PATH = '/api/v1/mcp/mcp';

/** What every provider's MCP proxy path starts with (`<prefix>/<provider>/mcp`). */
export const MCP_PROXY_PREFIX = '/api/v1/mcp-proxy';

/** One provider's MCP proxy path; the capture is the provider's name. */
const MCP_PROXY_PATH = new RegExp(`^${MCP_PROXY_PREFIX}/([A-Za-z0-9_-]{1,100})/mcp$`);

/** Whether `path` is one of the MCP endpoints (each a protected resource an OAuth token may be issued for). */
export const isMcpEndpointPath = (path: string): boolean => path === MCP_UNIFIED_PATH || MCP_PROXY_PATH.test(path);

/** The provider a proxy path names, or undefined for the unified endpoint or any other path. */
export const mcpProxyProviderOf = (path: string): string | undefined => MCP_PROXY_PATH.exec(path)?.[1];

/** Whether `resource` names one of this gateway's MCP endpoints under `issuer` (RFC 8707 `resource`). */
export function isMcpResource(issuer: string, resource: string): boolean {
  return resource.startsWith(issuer) && isMcpEndpointPath(resource.slice(issuer.length));
}
