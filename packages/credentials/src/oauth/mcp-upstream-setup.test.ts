import { systemClock } from '@agentgw/core';
import { testConfig } from '@agentgw/service-kit/testing';
import {
  freePort,
  startOidcServer,
  startProtectedMcpServer,
  type OidcServer,
  type ProtectedMcpServer,
} from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpMcpUpstreamAuth } from './mcp-upstream-setup.js';
import { redirectUriFor, upstreamClientDocumentUrl } from './upstream-client-document.js';

const PUBLIC = 'https://gateway.example';

// Which client the gateway uses at an upstream's authorization server, against real OpenID
// providers (oidc-provider) on loopback: one that takes client ID metadata documents, one that only registers.
describe('setUpMcpUpstreamAuth: the client at the upstream authorization server', () => {
  let documents: OidcServer;
  let registering: OidcServer;
  let withDocuments: ProtectedMcpServer;
  let withRegistration: ProtectedMcpServer;

  async function protectedBy(options: { clientMetadataDocuments: boolean }): Promise<[OidcServer, ProtectedMcpServer]> {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    const oidc = await startOidcServer({ clients: [], resource, registration: true, ...options });
    return [oidc, await startProtectedMcpServer({ issuer: oidc.issuer, jwksUri: oidc.jwksUri, resource, port })];
  }

  const setUp = (
    endpoint: string,
    env: Record<string, string>,
    client: { clientId: string; clientSecret: string } | null = null,
  ) =>
    setUpMcpUpstreamAuth(
      { config: testConfig({ EGRESS_POLICY: 'allow-private', ...env }), clock: systemClock },
      { endpoint, serviceType: 'mcp_tools_1', client },
    );

  beforeAll(async () => {
    [documents, withDocuments] = await protectedBy({ clientMetadataDocuments: true });
    [registering, withRegistration] = await protectedBy({ clientMetadataDocuments: false });
  });
  afterAll(async () => {
    await Promise.all([withDocuments?.close(), withRegistration?.close()]);
    await Promise.all([documents?.close(), registering?.close()]);
  });

  it("uses the gateway's document URL as a public client where the server takes documents (nothing registered, no secret)", async () => {
    const config = await setUp(withDocuments.url, { GATEWAY_PUBLIC_URL: PUBLIC });
    expect(config).toEqual({
      clientId: `${PUBLIC}/oauth/upstream-client.json`,
      clientAuthMethod: 'none',
      clientRegistration: 'client_id_metadata_document',
      issuer: documents.issuer,
      resource: withDocuments.url,
      scopes: ['openid', 'offline_access'],
    });
  });

  it('registers where the server takes no documents, or where the gateway has no URL a server could fetch', async () => {
    const registered = await setUp(withRegistration.url, { GATEWAY_PUBLIC_URL: PUBLIC });
    expect(registered).toMatchObject({
      clientRegistration: 'dynamic_registration',
      clientAuthMethod: 'client_secret_basic',
      clientSecret: expect.any(String),
    });
    const plainHttp = await setUp(withDocuments.url, { GATEWAY_PUBLIC_URL: 'http://gateway.example' });
    expect(plainHttp).toMatchObject({ clientRegistration: 'dynamic_registration', clientSecret: expect.any(String) });
    expect(plainHttp.clientId).not.toContain('upstream-client.json');
  });

  it("takes the admin's client before either", async () => {
    const config = await setUp(
      withDocuments.url,
      { GATEWAY_PUBLIC_URL: PUBLIC },
      { clientId: 'by-hand', clientSecret: 'hand-secret' },
    );
    expect(config).toMatchObject({
      clientId: 'by-hand',
      clientSecret: 'hand-secret',
      clientAuthMethod: 'client_secret_basic',
      clientRegistration: 'manual',
    });
  });
});

describe("the gateway's client ID metadata document URL", () => {
  const urls = { PORT: 7521 };
  it('exists for https and loopback http public URLs only', () => {
    expect(upstreamClientDocumentUrl({ ...urls, GATEWAY_PUBLIC_URL: 'https://gw.example/' })).toBe(
      'https://gw.example/oauth/upstream-client.json',
    );
    expect(upstreamClientDocumentUrl({ ...urls, GATEWAY_PUBLIC_URL: 'http://127.0.0.1:7521' })).toBe(
      'http://127.0.0.1:7521/oauth/upstream-client.json',
    );
    expect(upstreamClientDocumentUrl({ ...urls, GATEWAY_PUBLIC_URL: 'http://gw.example' })).toBeNull();
    expect(upstreamClientDocumentUrl({ ...urls, GATEWAY_PUBLIC_URL: undefined })).toBeNull();
  });

  it("sends the document's client to the shared callback and every other client to its service type's own", () => {
    const config = {
      ...urls,
      GATEWAY_PUBLIC_URL: 'https://gw.example',
      OAUTH_CALLBACK_BASE_URL: 'https://auth.gw.example',
    };
    expect(
      redirectUriFor(config, { clientId: 'https://gw.example/oauth/upstream-client.json', serviceType: 'mcp_a' }),
    ).toBe('https://auth.gw.example/api/v1/credentials/oauth/callback');
    expect(redirectUriFor(config, { clientId: 'registered-client', serviceType: 'mcp_a' })).toBe(
      'https://auth.gw.example/api/v1/credentials/oauth/mcp_a/callback',
    );
  });
});
