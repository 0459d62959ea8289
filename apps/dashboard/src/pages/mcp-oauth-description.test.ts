import { describe, expect, it } from 'vitest';
import type { CredentialProvider } from '../types.js';
import { describeMcpOAuth } from './mcp-oauth-description.js';

const saved = (serviceType: string, config: Record<string, unknown>): CredentialProvider => ({
  id: `cp-${serviceType}`,
  name: 'Protected tools (MCP authorization)',
  serviceType,
  authType: 'oauth2',
  description: null,
  config,
  tenantId: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('describeMcpOAuth', () => {
  const provider = { credentialServiceType: 'mcp_tools_1a2b3c4d' };

  it("names how the gateway's client was obtained, from the service type's credential provider", () => {
    const others = [saved('other', { clientRegistration: 'manual' })];
    expect(
      describeMcpOAuth(provider, [
        ...others,
        saved('mcp_tools_1a2b3c4d', {
          clientId: 'https://gw.example/oauth/upstream-client.json',
          clientRegistration: 'client_id_metadata_document',
        }),
      ]),
    ).toBe(
      "mcp_oauth: each user's own mcp_tools_1a2b3c4d token (MCP authorization); client: the gateway's client ID metadata document (public client, nothing registered)",
    );
    expect(
      describeMcpOAuth(provider, [saved('mcp_tools_1a2b3c4d', { clientRegistration: 'dynamic_registration' })]),
    ).toMatch(/; client: registered by the gateway \(RFC 7591\)$/);
    expect(describeMcpOAuth(provider, [saved('mcp_tools_1a2b3c4d', { clientRegistration: 'manual' })])).toMatch(
      /; client: entered by an admin$/,
    );
  });

  it('leaves the client out while unknown: not loaded, not found, or an unknown value', () => {
    const line = "mcp_oauth: each user's own mcp_tools_1a2b3c4d token (MCP authorization)";
    expect(describeMcpOAuth(provider, undefined)).toBe(line);
    expect(describeMcpOAuth(provider, [saved('other', { clientRegistration: 'manual' })])).toBe(line);
    expect(describeMcpOAuth(provider, [saved('mcp_tools_1a2b3c4d', { clientRegistration: '<script>' })])).toBe(line);
    expect(describeMcpOAuth(provider, [saved('mcp_tools_1a2b3c4d', { clientRegistration: 'toString' })])).toBe(line);
  });
});
