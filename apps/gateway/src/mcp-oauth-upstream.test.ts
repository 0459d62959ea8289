import { newId } from '@agentgw/core';
import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, freePort, startOidcServer, startProtectedMcpServer, tokenFor, type OidcServer, type ProtectedMcpServer } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PUBLIC = 'http://gateway.test';

// Tool providers with authType mcp_oauth (issue 22.5), in the all-in-one: the upstream is an MCP
// server (official SDK) protected by the MCP authorization spec with a real OpenID provider that
// offers registration. Creating the provider discovers and registers; users then connect once.
describe('an mcp_oauth tool provider (all-in-one)', () => {
  let deps: TestDeps;
  let host: Host;
  let oidc: OidcServer;
  let upstream: ProtectedMcpServer;
  let adminToken = '';

  async function api(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const url = path.startsWith('http') ? new URL(path) : null;
    const res = await host.app.request(url ? url.pathname + url.search : path, {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
  }

  const whoami = (token: string) => api('POST', '/api/v1/mcp/mcp', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } });

  /** A user allowed to call the provider's tools. */
  async function user(providerId: string): Promise<string> {
    const created = await createUser(deps, { email: `${newId()}@example.com`, roles: [] });
    const token = await tokenFor(deps, created);
    const rule = await api('POST', '/api/v1/admin/provider-access', adminToken, { subjectType: 'user', subjectId: created.id, providerId, action: 'allow', toolPattern: '*' });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    return token;
  }

  beforeAll(async () => {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    oidc = await startOidcServer({ clients: [], resource, registration: true });
    upstream = await startProtectedMcpServer({ issuer: oidc.issuer, jwksUri: oidc.jwksUri, resource, port });
    deps = await createTestDeps({ env: { GATEWAY_PUBLIC_URL: PUBLIC, EGRESS_POLICY: 'allow-private' } });
    host = await createGatewayHost(deps);
    await host.start();
    adminToken = await tokenFor(deps, await createUser(deps, { email: `admin-${newId()}@example.com`, roles: ['admin'] }));
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await upstream?.close();
    await oidc?.close();
    await deps?.close();
  });

  it('discovers and registers on create; alice connects once and reaches the upstream as herself, bob gets the connect URL', async () => {
    const created = await api('POST', '/api/v1/admin/tool-providers', adminToken, { name: 'Protected tools', pattern: '*', endpoint: upstream.url, authType: 'mcp_oauth' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const provider = created.body.provider as Json;
    expect(provider).toMatchObject({ authType: 'mcp_oauth', credentialServiceType: expect.stringMatching(/^mcp_protected_tools_[0-9a-f]{8}$/) });
    const serviceType = provider.credentialServiceType as string;

    // Saved as an ordinary oauth2 credential provider: the registered client, its secret sealed (masked), the upstream as resource.
    const saved = await deps.db.selectFrom('credential_providers').selectAll().where('service_type', '=', serviceType).executeTakeFirstOrThrow();
    const config = saved.config as Json;
    expect(saved.auth_type).toBe('oauth2');
    expect(config).toMatchObject({ issuer: oidc.issuer, resource: upstream.url, clientId: expect.any(String), scopes: ['openid', 'offline_access'] });
    const listed = await api('GET', `/api/v1/credential-providers/${saved.id}`, adminToken);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain('"clientSecret":"********"');

    const alice = await user(provider.id as string);
    const bob = await user(provider.id as string);
    const callback = `${PUBLIC}/api/v1/credentials/oauth/${serviceType}/callback`;
    const { authUrl } = (await api('GET', `/api/v1/credentials/oauth/${serviceType}/auth`, alice)).body as { authUrl: string };
    const landed = await oidc.authorize(`${authUrl}&login_hint=alice`, callback);
    expect((await api('GET', landed.href, alice)).status).toBe(200);

    const a = await whoami(alice);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.result.content[0].text).toBe('you are alice');

    const b = await whoami(bob);
    expect(b.status).toBe(403);
    expect(b.body.error).toMatchObject({ data: { code: 'CREDENTIALS_REQUIRED', missing: [serviceType], authUrl: `${PUBLIC}/api/v1/credentials/oauth/${serviceType}/auth` } });
    expect(upstream.identities).toEqual(['alice']);
  });

  it('answers 400 CLIENT_ID_REQUIRED naming the fields when the server will not register, and takes a client entered by the admin', async () => {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    const manual = { clientId: 'entered-by-hand', clientSecret: 'secret-entered-by-hand' };
    const closed = await startOidcServer({ clients: [{ ...manual, redirectUris: [`${PUBLIC}/api/v1/credentials/oauth/closed_tools/callback`] }], resource });
    const server = await startProtectedMcpServer({ issuer: closed.issuer, jwksUri: closed.jwksUri, resource, port });
    try {
      const input = { name: 'Closed', pattern: 'closed_*', endpoint: server.url, authType: 'mcp_oauth', credentialServiceType: 'closed_tools' };
      const refused = await api('POST', '/api/v1/admin/tool-providers', adminToken, input);
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(JSON.stringify(refused.body)).toContain('CLIENT_ID_REQUIRED');
      expect(JSON.stringify(refused.body)).toContain('clientSecret');
      expect(await deps.db.selectFrom('tool_providers').select('id').where('name', '=', 'Closed').execute()).toEqual([]);
      expect(await deps.db.selectFrom('credential_providers').select('id').where('service_type', '=', 'closed_tools').execute()).toEqual([]);

      const created = await api('POST', '/api/v1/admin/tool-providers', adminToken, { ...input, upstreamClient: manual });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.provider).toMatchObject({ authType: 'mcp_oauth', credentialServiceType: 'closed_tools' });
      const saved = await deps.db.selectFrom('credential_providers').selectAll().where('service_type', '=', 'closed_tools').executeTakeFirstOrThrow();
      expect(saved.config).toMatchObject({ clientId: manual.clientId, issuer: closed.issuer, resource });
      expect(JSON.stringify(saved.config)).not.toContain(manual.clientSecret);
      expect(JSON.stringify(created.body)).not.toContain(manual.clientSecret);

      // The admin action runs it again on the existing provider, replacing (not duplicating) its credential provider.
      const again = await api('POST', `/api/v1/admin/tool-providers/${created.body.provider.id as string}/discover-auth`, adminToken, { upstreamClient: manual });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(await deps.db.selectFrom('credential_providers').select('id').where('service_type', '=', 'closed_tools').execute()).toHaveLength(1);
    } finally {
      await server.close();
      await closed.close();
    }
  });
});
