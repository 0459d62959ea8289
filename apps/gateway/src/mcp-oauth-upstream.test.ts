import { freePort, startOidcServer, startProtectedMcpServer } from '@agentgw/testkit';
import { describe, expect, it } from 'vitest';
import { asUserGateway, connectUrl, PUBLIC, type Json } from './as-user.fixtures.js';

// Tool providers with authType mcp_oauth (issue 22.5), in the all-in-one: the upstream is an MCP
// server (official SDK) protected by the MCP authorization spec with a real OpenID provider that
// offers registration. Creating the provider discovers and registers; users then connect once.
describe('an mcp_oauth tool provider (all-in-one)', () => {
  const gateway = asUserGateway();
  const { api, user, whoami } = gateway;

  it('discovers and registers on create; alice connects once and reaches the upstream as herself, bob gets the connect URL', async () => {
    const created = await api('POST', '/api/v1/admin/tool-providers', gateway.adminToken, {
      name: 'Protected tools',
      pattern: '*',
      endpoint: gateway.upstream.url,
      authType: 'mcp_oauth',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const provider = created.body.provider as Json;
    expect(provider).toMatchObject({
      authType: 'mcp_oauth',
      credentialServiceType: expect.stringMatching(/^mcp_protected_tools_[0-9a-f]{8}$/),
    });
    const serviceType = provider.credentialServiceType as string;

    // Saved as an ordinary oauth2 credential provider: the registered client, its secret sealed (masked), the upstream as resource.
    const saved = await gateway.deps.db
      .selectFrom('credential_providers')
      .selectAll()
      .where('service_type', '=', serviceType)
      .executeTakeFirstOrThrow();
    const config = saved.config as Json;
    expect(saved.auth_type).toBe('oauth2');
    expect(config).toMatchObject({
      issuer: gateway.oidc.issuer,
      resource: gateway.upstream.url,
      clientId: expect.any(String),
      scopes: ['openid', 'offline_access'],
    });
    const listed = await api('GET', `/api/v1/credential-providers/${saved.id}`, gateway.adminToken);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain('"clientSecret":"********"');

    const alice = await user(provider.id as string);
    const bob = await user(provider.id as string);
    await gateway.connect(alice, 'alice', serviceType);

    const a = await whoami(alice);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.result.content[0].text).toBe('you are alice');

    const b = await whoami(bob);
    expect(b.status).toBe(403);
    expect(b.body.error).toMatchObject({
      data: { code: 'CREDENTIALS_REQUIRED', missing: [serviceType], authUrl: connectUrl(serviceType) },
    });
    expect(gateway.upstream.identities).toEqual(['alice']);
  });

  it("never lets a provider B name the service type of upstream A's tokens (RFC 8707): refused as user_oauth, as mcp_oauth, and on moving A", async () => {
    const created = await api('POST', '/api/v1/admin/tool-providers', gateway.adminToken, {
      name: 'Upstream A',
      pattern: 'a_*',
      endpoint: gateway.upstream.url,
      authType: 'mcp_oauth',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const serviceType = created.body.provider.credentialServiceType as string;
    const alice = await user(created.body.provider.id as string);
    await gateway.connect(alice, 'alice', serviceType);
    // Upstream B trusts the same OpenID provider, for its own resource.
    const portB = await freePort();
    const b = await startProtectedMcpServer({
      issuer: gateway.oidc.issuer,
      jwksUri: gateway.oidc.jwksUri,
      resource: `http://127.0.0.1:${portB}/mcp`,
      port: portB,
    });
    try {
      const naming = (authType: string) =>
        api('POST', '/api/v1/admin/tool-providers', gateway.adminToken, {
          name: `Upstream B ${authType}`,
          pattern: 'b_*',
          endpoint: b.url,
          authType,
          credentialServiceType: serviceType,
        });
      expect(await naming('user_oauth')).toMatchObject({ status: 400, body: { field: 'endpoint' } });
      expect(await naming('mcp_oauth')).toMatchObject({ status: 400, body: { field: 'credentialServiceType' } });
      const moved = await api(
        'PUT',
        `/api/v1/admin/tool-providers/${created.body.provider.id as string}`,
        gateway.adminToken,
        { endpoint: b.url },
      );
      expect(moved).toMatchObject({ status: 400, body: { field: 'endpoint' } });
      // A's credential provider still names A, and B never saw a token.
      const saved = await gateway.deps.db
        .selectFrom('credential_providers')
        .select('config')
        .where('service_type', '=', serviceType)
        .executeTakeFirstOrThrow();
      expect(saved.config).toMatchObject({ resource: gateway.upstream.url });
      expect(b.requests.filter((r) => r.subject !== null)).toEqual([]);
    } finally {
      await b.close();
    }
  });

  it('answers 400 CLIENT_ID_REQUIRED naming the fields when the server will not register, and takes a client entered by the admin', async () => {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    const manual = { clientId: 'entered-by-hand', clientSecret: 'secret-entered-by-hand' };
    const closed = await startOidcServer({
      clients: [{ ...manual, redirectUris: [`${PUBLIC}/api/v1/credentials/oauth/closed_tools/callback`] }],
      resource,
    });
    const server = await startProtectedMcpServer({ issuer: closed.issuer, jwksUri: closed.jwksUri, resource, port });
    try {
      const input = {
        name: 'Closed',
        pattern: 'closed_*',
        endpoint: server.url,
        authType: 'mcp_oauth',
        credentialServiceType: 'closed_tools',
      };
      const refused = await api('POST', '/api/v1/admin/tool-providers', gateway.adminToken, input);
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(JSON.stringify(refused.body)).toContain('CLIENT_ID_REQUIRED');
      expect(JSON.stringify(refused.body)).toContain('clientSecret');
      expect(
        await gateway.deps.db.selectFrom('tool_providers').select('id').where('name', '=', 'Closed').execute(),
      ).toEqual([]);
      expect(
        await gateway.deps.db
          .selectFrom('credential_providers')
          .select('id')
          .where('service_type', '=', 'closed_tools')
          .execute(),
      ).toEqual([]);

      const created = await api('POST', '/api/v1/admin/tool-providers', gateway.adminToken, {
        ...input,
        upstreamClient: manual,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.provider).toMatchObject({ authType: 'mcp_oauth', credentialServiceType: 'closed_tools' });
      const saved = await gateway.deps.db
        .selectFrom('credential_providers')
        .selectAll()
        .where('service_type', '=', 'closed_tools')
        .executeTakeFirstOrThrow();
      expect(saved.config).toMatchObject({ clientId: manual.clientId, issuer: closed.issuer, resource });
      expect(JSON.stringify(saved.config)).not.toContain(manual.clientSecret);
      expect(JSON.stringify(created.body)).not.toContain(manual.clientSecret);

      // The admin action runs it again on the existing provider, replacing (not duplicating) its credential provider.
      const again = await api(
        'POST',
        `/api/v1/admin/tool-providers/${created.body.provider.id as string}/discover-auth`,
        gateway.adminToken,
        { upstreamClient: manual },
      );
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(
        await gateway.deps.db
          .selectFrom('credential_providers')
          .select('id')
          .where('service_type', '=', 'closed_tools')
          .execute(),
      ).toHaveLength(1);
    } finally {
      await server.close();
      await closed.close();
    }
  });
});
