import { freePort, startOidcServer, startProtectedMcpServer } from '@agentgw/testkit';
import { describe, expect, it } from 'vitest';
import { asUserGateway, type Json } from './as-user.fixtures.js';

// The gateway as an upstream's OAuth client by its client ID metadata document (MCP authorization
// 2025-11-25): the all-in-one on a real loopback port (the upstream's authorization server fetches
// the document from it), a real OpenID provider that accepts such documents, an MCP server (official
// SDK) that takes only that provider's tokens for its own URL.
describe('an mcp_oauth tool provider whose authorization server takes client ID metadata documents', () => {
  // Registration is open too: the document must be preferred to it.
  const gateway = asUserGateway({ clientMetadataDocuments: true });
  const { api, user, whoami } = gateway;
  const documentUrl = () => `${gateway.publicUrl}/oauth/upstream-client.json`;
  const sharedCallback = () => `${gateway.publicUrl}/api/v1/credentials/oauth/callback`;

  const savedConfig = async (serviceType: string): Promise<Json> =>
    (
      await gateway.deps.db
        .selectFrom('credential_providers')
        .select('config')
        .where('service_type', '=', serviceType)
        .executeTakeFirstOrThrow()
    ).config;

  it('serves the document publicly as cacheable JSON listing only the shared callback, with no secret', async () => {
    const res = await fetch(documentUrl());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toMatch(/\bpublic\b.*\bmax-age=\d+/);
    const doc = (await res.json()) as Json;
    expect(doc).toEqual({
      client_id: documentUrl(),
      client_name: 'Agent Gateway',
      client_uri: gateway.publicUrl,
      redirect_uris: [sharedCallback()],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const text = JSON.stringify(doc);
    for (const secret of [gateway.deps.config.JWT_SECRET, gateway.deps.config.CREDENTIAL_ENCRYPTION_KEY].filter(
      (s): s is string => typeof s === 'string' && s.length > 0,
    ))
      expect(text).not.toContain(secret);
  });

  it('uses the document as client_id (nothing registered); alice connects through the shared callback and reaches the upstream as herself', async () => {
    const created = await api('POST', '/api/v1/admin/tool-providers', gateway.adminToken, {
      name: 'Documented tools',
      pattern: '*',
      endpoint: gateway.upstream.url,
      authType: 'mcp_oauth',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const provider = created.body.provider as Json;
    const serviceType = provider.credentialServiceType as string;
    const config = await savedConfig(serviceType);
    expect(config).toMatchObject({
      clientId: documentUrl(),
      clientAuthMethod: 'none',
      clientRegistration: 'client_id_metadata_document',
      issuer: gateway.oidc.issuer,
      resource: gateway.upstream.url,
    });
    expect(config).not.toHaveProperty('clientSecret');

    const alice = await user(provider.id as string);
    const started = await api('GET', `/api/v1/credentials/oauth/${serviceType}/auth`, alice);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const authUrl = new URL(started.body.authUrl as string);
    expect(authUrl.searchParams.get('client_id')).toBe(documentUrl());
    expect(authUrl.searchParams.get('redirect_uri')).toBe(sharedCallback());
    expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');

    const landed = await gateway.oidc.authorize(`${authUrl.href}&login_hint=alice`, sharedCallback());
    // The upstream's authorization server read the gateway's document to learn the client.
    expect(gateway.oidc.metadataDocumentsFetched).toContain(documentUrl());
    const done = await api('GET', landed.href, alice);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({
      credential: { serviceType },
      returnTo: `${gateway.publicUrl}/credentials?connected=${serviceType}`,
    });
    // Single use: the same callback again is refused.
    expect((await api('GET', landed.href, alice)).status).toBe(400);

    const call = await whoami(alice);
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    expect(call.body.result.content[0].text).toBe('you are alice');
    expect(gateway.upstream.identities).toContain('alice');
  });

  it('falls back to registration where the authorization server does not take documents', async () => {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    const plain = await startOidcServer({ clients: [], resource, registration: true });
    const other = await startProtectedMcpServer({ issuer: plain.issuer, jwksUri: plain.jwksUri, resource, port });
    try {
      const created = await api('POST', '/api/v1/admin/tool-providers', gateway.adminToken, {
        name: 'Registered tools',
        pattern: 'reg_*',
        endpoint: other.url,
        authType: 'mcp_oauth',
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const serviceType = created.body.provider.credentialServiceType as string;
      const config = await savedConfig(serviceType);
      expect(config).toMatchObject({
        clientRegistration: 'dynamic_registration',
        clientAuthMethod: 'client_secret_basic',
        clientSecret: expect.any(String),
      });
      expect(config.clientId).not.toBe(documentUrl());
      const alice = await user(created.body.provider.id as string);
      const started = await api('GET', `/api/v1/credentials/oauth/${serviceType}/auth`, alice);
      expect(new URL(started.body.authUrl as string).searchParams.get('redirect_uri')).toBe(
        `${gateway.publicUrl}/api/v1/credentials/oauth/${serviceType}/callback`,
      );
      // A flow started for a service type's own callback does not complete at the shared one.
      const landed = await plain.authorize(
        `${started.body.authUrl as string}&login_hint=alice`,
        `${gateway.publicUrl}/api/v1/credentials/oauth/${serviceType}/callback`,
      );
      const wrongDoor = await api('GET', `/api/v1/credentials/oauth/callback${landed.search}`, alice);
      expect(wrongDoor.status, JSON.stringify(wrongDoor.body)).toBe(400);
    } finally {
      await other.close();
      await plain.close();
    }
  });
});
