import { describe, expect, it } from 'vitest';
import { isMcpEndpointPath, isMcpResource, mcpProxyProviderOf } from './mcp-resource.js';

const ISSUER = 'https://gw.example.com';

describe('the MCP resource path rule', () => {
  it('accepts the unified endpoint and a provider proxy under the issuer', () => {
    expect(isMcpResource(ISSUER, `${ISSUER}/api/v1/mcp/mcp`)).toBe(true);
    expect(isMcpResource(ISSUER, `${ISSUER}/api/v1/mcp-proxy/github_2-x/mcp`)).toBe(true);
  });

  it('refuses another origin, another path, a bad provider name and a trailing part', () => {
    expect(isMcpResource(ISSUER, 'https://evil.example.com/api/v1/mcp/mcp')).toBe(false);
    expect(isMcpResource(ISSUER, `${ISSUER}/api/v1/agents`)).toBe(false);
    expect(isMcpResource(ISSUER, `${ISSUER}/api/v1/mcp-proxy/a.b/mcp`)).toBe(false);
    expect(isMcpResource(ISSUER, `${ISSUER}/api/v1/mcp-proxy/${'a'.repeat(101)}/mcp`)).toBe(false);
    expect(isMcpResource(ISSUER, `${ISSUER}/api/v1/mcp/mcp/extra`)).toBe(false);
    expect(isMcpResource(ISSUER, `${ISSUER}.evil.com/api/v1/mcp/mcp`)).toBe(false);
  });

  it('names the provider of a proxy path only', () => {
    expect(mcpProxyProviderOf('/api/v1/mcp-proxy/github/mcp')).toBe('github');
    expect(mcpProxyProviderOf('/api/v1/mcp/mcp')).toBeUndefined();
    expect(isMcpEndpointPath('/api/v1/mcp/mcp')).toBe(true);
    expect(isMcpEndpointPath('/api/v1/mcp')).toBe(false);
  });
});
