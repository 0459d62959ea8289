import { secretBoxFor } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import { json } from '@agentgw/db';
import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, startOidcServer, startProtectedMcpServer, tokenFor, type OidcServer, type ProtectedMcpServer } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PUBLIC = 'http://gateway.test';
const RESOURCE = 'https://tools.acme.test/mcp';
const CLIENT = { clientId: 'agentgw', clientSecret: 'client-secret-of-the-gateway' };
const CALLBACK = `${PUBLIC}/api/v1/credentials/oauth/acme_tools/callback`;

// Tool calls that reach an MCP upstream as the user (issue 22.4), in the all-in-one: the
// upstream (official SDK) accepts only access tokens of the OpenID provider for its resource and
// logs who called; two users who connected reach it as two identities, a third gets the connect URL.
describe('an MCP upstream called as the user (all-in-one)', () => {
  let deps: TestDeps;
  let host: Host;
  let oidc: OidcServer;
  let upstream: ProtectedMcpServer;
  let adminToken = '';
  let providerId = '';

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

  /** A user allowed to call the provider's tools; `account` connects at the provider when given. */
  async function user(account: string | null): Promise<string> {
    const created = await createUser(deps, { email: `${newId()}@example.com`, roles: [] });
    const token = await tokenFor(deps, created);
    const rule = await api('POST', '/api/v1/admin/provider-access', adminToken, { subjectType: 'user', subjectId: created.id, providerId, action: 'allow', toolPattern: '*' });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    if (account) {
      const { authUrl } = (await api('GET', '/api/v1/credentials/oauth/acme_tools/auth', token)).body as { authUrl: string };
      const callback = await oidc.authorize(`${authUrl}&login_hint=${account}`, CALLBACK);
      expect((await api('GET', callback.href, token)).status).toBe(200);
    }
    return token;
  }

  beforeAll(async () => {
    oidc = await startOidcServer({ clients: [{ ...CLIENT, redirectUris: [CALLBACK] }], resource: RESOURCE });
    upstream = await startProtectedMcpServer({ issuer: oidc.issuer, jwksUri: oidc.jwksUri, resource: RESOURCE });
    deps = await createTestDeps({ env: { GATEWAY_PUBLIC_URL: PUBLIC, EGRESS_POLICY: 'allow-private' } });
    host = await createGatewayHost(deps);
    await host.start();
    adminToken = await tokenFor(deps, await createUser(deps, { email: `admin-${newId()}@example.com`, roles: ['admin'] }));
    const id = newId();
    await deps.db
      .insertInto('credential_providers')
      .values({
        id,
        name: 'Acme tools',
        service_type: 'acme_tools',
        auth_type: 'oauth2',
        description: null,
        config: json({
          clientId: CLIENT.clientId,
          clientSecret: secretBoxFor(deps.config).seal(CLIENT.clientSecret, id),
          scopes: ['openid', 'offline_access'],
          issuer: oidc.issuer,
          resource: RESOURCE,
        }),
        tenant_id: null,
      })
      .execute();
    const created = await api('POST', '/api/v1/admin/tool-providers', adminToken, { name: 'acme', pattern: '*', endpoint: upstream.url, authType: 'user_oauth', credentialServiceType: 'acme_tools' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.provider).toMatchObject({ authType: 'user_oauth', credentialServiceType: 'acme_tools' });
    providerId = created.body.provider.id as string;
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await upstream?.close();
    await oidc?.close();
    await deps?.close();
  });

  it('reaches the upstream as each user who connected, and gives the others the connect URL, audited as refused', async () => {
    const alice = await user('alice');
    const bob = await user('bob');
    const carol = await user(null);

    const a = await whoami(alice);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.result.content[0].text).toBe('you are alice');
    const b = await whoami(bob);
    expect(b.body.result.content[0].text).toBe('you are bob');
    expect(upstream.identities).toEqual(['alice', 'bob']);

    const c = await whoami(carol);
    expect(c.status).toBe(403);
    expect(c.body.error).toMatchObject({
      code: -32003,
      data: { code: 'CREDENTIALS_REQUIRED', missing: ['acme_tools'], authUrl: `${PUBLIC}/api/v1/credentials/oauth/acme_tools/auth` },
    });
    expect(upstream.identities).toEqual(['alice', 'bob']);
    const auditId = c.body.error.data.auditId as string;
    const record = await waitForAudit(auditId);
    expect(record).toMatchObject({ status: 'rejected', error: expect.stringContaining('Connect acme_tools first') });
  });

  it('asks a client that declared URL-mode elicitation to open the connect URL (URLElicitationRequiredError)', async () => {
    const dave = await user(null);
    const post = (body: unknown, session?: string) =>
      host.app.request('/api/v1/mcp/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${dave}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': '2025-11-25',
          ...(session ? { 'mcp-session-id': session } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { url: {} } }, clientInfo: { name: 't', version: '1' } },
    });
    const session = init.headers.get('mcp-session-id') ?? '';
    expect(session).not.toBe('');
    const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, session);
    const body = (await res.json()) as Json;
    expect(body.error).toMatchObject({
      code: -32042,
      data: { elicitations: [{ mode: 'url', url: `${PUBLIC}/api/v1/credentials/oauth/acme_tools/auth`, elicitationId: expect.any(String) }], code: 'CREDENTIALS_REQUIRED' },
    });
  });

  it('refuses an upstream request carrying no token or one not issued for it (the fixture is really protected)', async () => {
    const bare = await fetch(upstream.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
    });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toContain('resource_metadata=');
    const metadata = (await (await fetch(new URL('/.well-known/oauth-protected-resource', upstream.url))).json()) as Json;
    expect(metadata).toEqual({ resource: RESOURCE, authorization_servers: [oidc.issuer], bearer_methods_supported: ['header'] });
  });

  async function waitForAudit(id: string): Promise<Json | undefined> {
    for (let i = 0; i < 100; i++) {
      const row = await deps.db.selectFrom('audit_logs').selectAll().where('id', '=', id).executeTakeFirst();
      if (row) return row;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return undefined;
  }
});
