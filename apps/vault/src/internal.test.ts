import { serve, type ServerType } from '@hono/node-server';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVault, directCredentialResolver, httpCredentialResolver } from '@agentgw/credentials';
import { sessionHeaders, useSharedVault } from './vault.fixtures.js';

const PATH = '/internal/v1/credentials/resolve';

function listen(app: {
  fetch: (req: Request) => Response | Promise<Response>;
}): Promise<{ url: string; server: ServerType }> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
      resolve({ url: `http://127.0.0.1:${info.port}`, server }),
    );
  });
}

/** An agent of the seeded users' tenant: it may receive their credentials. */
const recipient = { kind: 'agent' as const, tenantId: 'acme', endpoint: 'https://agent.acme.test/' };

const closeServer = (server: ServerType) => new Promise<void>((resolve) => server.close(() => resolve()));

describe.each(testBackends())('internal resolve API (%s)', (backend) => {
  const f = useSharedVault(backend);

  async function seededUser() {
    const user = await f.user({ tenantId: 'acme' });
    await f.call('POST', '/api/v1/credentials/apikey', user.headers, { serviceType: 'github', apiKey: 'gh-secret' });
    await f.provider({
      serviceType: 'slack',
      authType: 'jwt',
      config: { connectUrl: 'https://acme.example.com/slack' },
      tenantId: 'acme',
    });
    return user;
  }

  const expected = {
    credentials: { github: 'gh-secret' },
    missing: ['slack'],
    authUrls: { slack: 'https://acme.example.com/slack' },
  };

  it('resolves for the named user with a service token', async () => {
    const user = await seededUser();
    const token = await f.deps.auth.signServiceToken('invoke-proxy', 'vault');
    const res = await f.call(
      'POST',
      PATH,
      { 'x-service-token': token },
      { userId: user.id, tenantId: 'acme', serviceTypes: ['github', 'slack'], recipient },
    );
    expect(res).toEqual({ status: 200, body: expected });
  });

  it('validates the body', async () => {
    const token = await f.deps.auth.signServiceToken('invoke-proxy', 'vault');
    const res = await f.call('POST', PATH, { 'x-service-token': token }, { serviceTypes: ['github'] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'userId' });
  });

  it('requires the recipient, and releases nothing to an upstream of another tenant (distributed callers alike)', async () => {
    const user = await seededUser();
    const token = await f.deps.auth.signServiceToken('mcp-gateway', 'vault');
    const body = { userId: user.id, tenantId: 'acme', serviceTypes: ['github'] };
    const bare = await f.call('POST', PATH, { 'x-service-token': token }, body);
    expect(bare).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', field: 'recipient' } });
    const elsewhere = await f.call(
      'POST',
      PATH,
      { 'x-service-token': token },
      { ...body, recipient: { kind: 'tool_provider', tenantId: 'globex', endpoint: 'https://evil.example.test/mcp' } },
    );
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body).toMatchObject({ credentials: {}, missing: ['github'] });
    expect(JSON.stringify(elsewhere.body)).not.toContain('gh-secret');
  });

  it('refuses everything but a vault service token with 401', async () => {
    const user = await seededUser();
    const agent = await f.agent({ tenantId: 'acme' });
    const apiKey = await f.apiKey({ scopes: ['credentials:resolve'] });
    const body = { userId: user.id, tenantId: 'acme', serviceTypes: ['github'], recipient };
    const attempts: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${user.token}` },
      { 'x-service-token': user.token },
      { 'x-api-key': apiKey, 'x-user-id': user.id },
      { 'x-service-token': apiKey },
      { authorization: `Bearer ${agent.runtimeToken}` },
      { 'x-service-token': agent.runtimeToken },
      await sessionHeaders(f, user, agent.id),
      { 'x-service-token': (await sessionHeaders(f, user, agent.id))['x-gateway-session-token']! },
      { 'x-service-token': await f.deps.auth.signServiceToken('invoke-proxy', 'audit-writer') },
      { 'x-service-token': 'garbage' },
    ];
    for (const headers of attempts) {
      const res = await f.call('POST', PATH, headers, body);
      expect(res.status, JSON.stringify(Object.keys(headers))).toBe(401);
      expect(JSON.stringify(res.body)).not.toContain('gh-secret');
    }
  });

  it('a service token is not accepted on the public API', async () => {
    const token = await f.deps.auth.signServiceToken('invoke-proxy', 'vault');
    expect((await f.call('GET', '/api/v1/credentials', { authorization: `Bearer ${token}` })).status).toBe(401);
  });

  it('directCredentialResolver answers like the vault', async () => {
    const user = await seededUser();
    const resolver = directCredentialResolver(createVault(f.deps));
    expect(
      await resolver.resolve({ userId: user.id, tenantId: 'acme', serviceTypes: ['github', 'slack'], recipient }),
    ).toEqual(expected);
  });

  describe('httpCredentialResolver', () => {
    let vaultServer: { url: string; server: ServerType };
    beforeEach(async () => {
      vaultServer = await listen(f.app);
    });
    afterEach(async () => {
      await closeServer(vaultServer.server);
    });

    it('resolves through the internal endpoint', async () => {
      const user = await seededUser();
      const resolver = httpCredentialResolver({ baseUrl: `${vaultServer.url}/`, auth: f.deps.auth });
      expect(
        await resolver.resolve({ userId: user.id, tenantId: 'acme', serviceTypes: ['github', 'slack'], recipient }),
      ).toEqual(expected);
    });

    it('maps a refused service token to 503, not to "missing"', async () => {
      let other: TestDeps | undefined;
      try {
        other = await createTestDeps({
          backend: 'pglite',
          env: { JWT_SECRET: 'a-different-jwt-secret-for-another-gateway-000' },
        });
        const resolver = httpCredentialResolver({ baseUrl: vaultServer.url, auth: other.auth });
        await expect(
          resolver.resolve({ userId: 'u', tenantId: null, serviceTypes: ['github'], recipient }),
        ).rejects.toMatchObject({
          status: 503,
          code: 'SERVICE_UNAVAILABLE',
        });
      } finally {
        await other?.close();
      }
    });
  });
});
