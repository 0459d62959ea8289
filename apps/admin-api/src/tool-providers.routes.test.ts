import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { secretBoxFor } from '@agentgw/auth';
import { errorHandler } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import type { TestDeps } from '@agentgw/service-kit/testing';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { openApiApp } from '@agentgw/service-kit';
import { startAdminApiUnderTest, signedInUser, testClient, type Call, type Caller } from './admin-api.fixtures.js';
import { toolProvidersRoutes } from './tool-providers.routes.js';

const BASE = '/api/v1/admin/tool-providers';

/** A TCP server that accepts connections and never answers; `hungUp` tells whether a caller ended its connection. */
async function startSilentServer(): Promise<{ url: string; hungUp(): boolean; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  let hungUp = false;
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on('end', () => (hungUp = true)).on('close', () => (hungUp = true));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    hungUp: () => hungUp,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A URL on which nothing listens (a port just released). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/mcp`;
}

describe.each(testBackends())('tool providers API (%s)', (backend) => {
  let deps: TestDeps;
  let call: Call;
  let admin: Caller;
  let acmeAdmin: Caller;
  let globexAdmin: Caller;
  let creator: Caller;
  let mcp: McpFixture;
  const providerEvents: unknown[] = [];
  const ruleEvents: unknown[] = [];

  beforeAll(async () => {
    ({ deps, call, admin, acmeAdmin, globexAdmin, acmeCreator: creator } = await startAdminApiUnderTest(backend));
    await deps.bus.subscribe('providers.changed', (e) => void providerEvents.push(e));
    await deps.bus.subscribe('rules.changed', (e) => void ruleEvents.push(e));
    mcp = await startMcpServer({
      auth: { bearer: 'upstream-bearer-secret' },
      tools: [
        {
          name: 'github_create_issue',
          description: 'Open an issue',
          inputSchema: { title: z.string() },
          handler: () => 'ok',
        },
        { name: 'github_list_repos', handler: () => 'ok' },
      ],
    });
  });
  afterAll(async () => {
    await mcp?.close();
    await deps?.close();
  });

  const create = (caller: Caller, body: Record<string, unknown>) => call('POST', BASE, { token: caller.token, body });
  const minimal = (name: string) => ({ name, pattern: `${name}_*`, endpoint: 'https://mcp.example.test/mcp' });
  /** An admin's access rule letting `userId` use `providerId`: what a caller who manages no providers needs to see one. */
  const allowUse = async (userId: string, providerId: string) => {
    const rule = await call('POST', '/api/v1/admin/provider-access', {
      token: admin.token,
      body: { subjectType: 'user', subjectId: userId, providerId, action: 'allow', toolPattern: '*' },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
  };

  it('refuses an endpoint the egress policy always forbids with 400 naming the field', async () => {
    const res = await create(admin, { ...minimal('meta'), endpoint: 'http://169.254.169.254/mcp' });
    expect(res).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', field: 'endpoint' } });
    const ok = (await create(admin, minimal('fine'))).body.provider;
    const update = await call('PUT', `${BASE}/${ok.id}`, {
      token: admin.token,
      body: { endpoint: 'http://metadata.google.internal/mcp' },
    });
    expect(update).toMatchObject({ status: 400, body: { field: 'endpoint' } });
  });

  it('takes a per-user auth type only with the service type of the credential it sends (400 naming credentialServiceType otherwise)', async () => {
    const missing = await create(admin, { ...minimal('peruser'), authType: 'user_oauth' });
    expect(missing).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', field: 'credentialServiceType' } });
    const bad = await create(admin, {
      ...minimal('peruser'),
      authType: 'user_key',
      credentialServiceType: 'Not-A-Type',
    });
    expect(bad).toMatchObject({ status: 400, body: { field: 'credentialServiceType' } });
    const ok = await create(admin, { ...minimal('peruser'), authType: 'user_oauth', credentialServiceType: 'github' });
    expect(ok.body.provider).toMatchObject({
      authType: 'user_oauth',
      credentialServiceType: 'github',
      hasAuthSecret: false,
    });
    const cleared = await call('PUT', `${BASE}/${ok.body.provider.id}`, {
      token: admin.token,
      body: { credentialServiceType: null },
    });
    expect(cleared).toMatchObject({ status: 400, body: { field: 'credentialServiceType' } });
    const switched = await call('PUT', `${BASE}/${ok.body.provider.id}`, {
      token: admin.token,
      body: { authType: 'none', credentialServiceType: null },
    });
    expect(switched.body.provider).toMatchObject({ authType: 'none', credentialServiceType: null });
  });

  /** Declares a credential service type in the caller's scope (a platform admin's: global); with `mcpServer`, as mcp_oauth's discovery saves it (bound to that server). */
  const declare = async (caller: Caller, serviceType: string, mcpServer?: string) => {
    const res = await call('POST', '/api/v1/credential-providers', {
      token: caller.token,
      body: {
        name: serviceType,
        serviceType,
        authType: 'oauth2',
        config: {
          clientId: 'client-1',
          clientSecret: 'oauth-client-secret',
          scopes: ['read'],
          authorizeUrl: 'https://as.example.test/authorize',
          tokenUrl: 'https://as.example.test/token',
          ...(mcpServer && { resource: mcpServer, clientRegistration: 'manual' }),
        },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };

  it("refuses a tenant's per-user provider a global service type (400 naming credentialServiceType), and takes one its tenant declared", async () => {
    await declare(admin, 'globalcrm');
    for (const authType of ['user_oauth', 'user_key'] as const) {
      const res = await create(acmeAdmin, { ...minimal('harvest'), authType, credentialServiceType: 'globalcrm' });
      expect(res, authType).toMatchObject({
        status: 400,
        body: {
          code: 'VALIDATION_ERROR',
          field: 'credentialServiceType',
          message: expect.stringContaining('a global service type serves only global providers'),
        },
      });
    }
    // Undeclared types are nobody's in a tenant either.
    expect(
      await create(acmeAdmin, { ...minimal('harvest'), authType: 'user_key', credentialServiceType: 'nobodys' }),
    ).toMatchObject({ status: 400, body: { field: 'credentialServiceType' } });

    await declare(acmeAdmin, 'acmecrm');
    const own = await create(acmeAdmin, {
      ...minimal('acmecrm'),
      authType: 'user_oauth',
      credentialServiceType: 'acmecrm',
    });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    // Switching an own provider to the global type is the same refusal; globex cannot name acme's type.
    const switched = await call('PUT', `${BASE}/${own.body.provider.id}`, {
      token: acmeAdmin.token,
      body: { credentialServiceType: 'globalcrm' },
    });
    expect(switched).toMatchObject({ status: 400, body: { field: 'credentialServiceType' } });
    expect(
      await create(globexAdmin, { ...minimal('steal'), authType: 'user_oauth', credentialServiceType: 'acmecrm' }),
    ).toMatchObject({ status: 400, body: { field: 'credentialServiceType' } });
    // A global provider (a platform admin's) takes the global type, not a tenant's.
    expect(
      (await create(admin, { ...minimal('gcrm'), authType: 'user_oauth', credentialServiceType: 'globalcrm' })).status,
    ).toBe(201);
    expect(
      await create(admin, { ...minimal('gacme'), authType: 'user_oauth', credentialServiceType: 'acmecrm' }),
    ).toMatchObject({ status: 400, body: { field: 'credentialServiceType' } });
  });

  it('binds an mcp_oauth service type to the MCP server its tokens are issued for (RFC 8707): another endpoint is refused on create and on update', async () => {
    const upstreamA = 'https://a.example.test/mcp';
    await declare(admin, 'upstream_a', upstreamA);
    const atA = await create(admin, {
      ...minimal('ata'),
      endpoint: upstreamA,
      authType: 'user_oauth',
      credentialServiceType: 'upstream_a',
    });
    expect(atA.status, JSON.stringify(atA.body)).toBe(201);
    const atB = await create(admin, {
      ...minimal('atb'),
      endpoint: 'https://b.example.test/mcp',
      authType: 'user_oauth',
      credentialServiceType: 'upstream_a',
    });
    expect(atB).toMatchObject({
      status: 400,
      body: { field: 'endpoint', message: expect.stringContaining(`issued for the MCP server ${upstreamA}`) },
    });
    // Moving the provider of A to B's endpoint is re-checked: its users' tokens for A would follow it.
    const moved = await call('PUT', `${BASE}/${atA.body.provider.id}`, {
      token: admin.token,
      body: { endpoint: 'https://b.example.test/mcp' },
    });
    expect(moved).toMatchObject({ status: 400, body: { field: 'endpoint' } });
    // Leaving the type behind (another auth) moves it.
    const away = await call('PUT', `${BASE}/${atA.body.provider.id}`, {
      token: admin.token,
      body: { endpoint: 'https://b.example.test/mcp', authType: 'none', credentialServiceType: null },
    });
    expect(away.status, JSON.stringify(away.body)).toBe(200);
  });

  it('lets only a platform admin configure a token exchange (403 TOKEN_EXCHANGE_ADMIN_ONLY for a tenant admin)', async () => {
    const exchange = { tokenUrl: 'https://sts.example.test/token', clientId: 'gw', clientSecret: 'sts-secret' };
    const refused = await create(acmeAdmin, { ...minimal('sts'), authType: 'token_exchange', tokenExchange: exchange });
    expect(refused).toMatchObject({ status: 403, body: { code: 'TOKEN_EXCHANGE_ADMIN_ONLY' } });
    const plain = await create(acmeAdmin, minimal('plain'));
    expect(plain.status).toBe(201);
    const switched = await call('PUT', `${BASE}/${plain.body.provider.id}`, {
      token: acmeAdmin.token,
      body: { authType: 'token_exchange', tokenExchange: exchange },
    });
    expect(switched).toMatchObject({ status: 403, body: { code: 'TOKEN_EXCHANGE_ADMIN_ONLY' } });
    const byAdmin = await create(admin, {
      ...minimal('sts'),
      authType: 'token_exchange',
      tokenExchange: exchange,
      tenantId: 'acme',
    });
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(201);
    // The tenant admin may rename it, not point it elsewhere.
    const id = byAdmin.body.provider.id as string;
    expect((await call('PUT', `${BASE}/${id}`, { token: acmeAdmin.token, body: { description: 'ours' } })).status).toBe(
      200,
    );
    const moved = await call('PUT', `${BASE}/${id}`, {
      token: acmeAdmin.token,
      body: { endpoint: 'https://elsewhere.example.test/mcp' },
    });
    expect(moved).toMatchObject({ status: 403, body: { code: 'TOKEN_EXCHANGE_ADMIN_ONLY' } });
  });

  it('shows a self-registered user only the providers they may use: no other global provider by list, id or tools', async () => {
    const email = `self-${Date.now()}@example.test`;
    const registered = await call('POST', '/api/v1/auth/register', {
      body: { email, password: 'long-enough-1', name: 'Self' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const login = await call('POST', '/api/v1/auth/login', { body: { email, password: 'long-enough-1' } });
    const self = { token: login.body.token as string, id: login.body.user.id as string };
    const usable = (
      await create(admin, {
        ...minimal('usable'),
        endpoint: mcp.url,
        authType: 'bearer',
        authSecret: 'upstream-bearer-secret',
      })
    ).body.provider;
    const other = (
      await create(admin, {
        ...minimal('other'),
        endpoint: mcp.url,
        authType: 'bearer',
        authSecret: 'upstream-bearer-secret',
      })
    ).body.provider;
    await allowUse(self.id, usable.id);

    const listed = await call('GET', BASE, { token: self.token });
    expect(listed.status).toBe(200);
    expect(listed.body.providers.map((p: { id: string }) => p.id)).toEqual([usable.id]);
    expect(JSON.stringify(listed.body)).not.toContain(other.id);
    expect((await call('GET', `${BASE}/${usable.id}`, { token: self.token })).status).toBe(200);
    expect((await call('GET', `${BASE}/${other.id}`, { token: self.token })).status).toBe(404);
    expect((await call('GET', `${BASE}/${other.id}/tools`, { token: self.token })).status).toBe(404);
    // Whoever manages providers still sees them all.
    const all = (await call('GET', BASE, { token: admin.token })).body.providers.map((p: { id: string }) => p.id);
    expect(all).toEqual(expect.arrayContaining([usable.id, other.id]));
  });

  it('creates a provider with defaults; the secret is write-only and sealed at rest', async () => {
    const plain = await create(admin, minimal('plain'));
    expect(plain.status).toBe(201);
    expect(plain.body).toEqual({
      success: true,
      provider: {
        id: expect.any(String),
        name: 'plain',
        pattern: 'plain_*',
        endpoint: 'https://mcp.example.test/mcp',
        authType: 'none',
        hasAuthSecret: false,
        credentialServiceType: null,
        tokenExchange: null,
        priority: 0,
        description: null,
        namePrefix: null,
        tenantId: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    expect(providerEvents).toContainEqual({ providerId: plain.body.provider.id });

    const secret = await create(admin, {
      ...minimal('secretive'),
      authType: 'bearer',
      authSecret: 'top-secret-value',
      priority: 5,
    });
    expect(secret.status).toBe(201);
    expect(secret.body.provider).toMatchObject({ authType: 'bearer', hasAuthSecret: true, priority: 5 });
    expect(JSON.stringify(secret.body)).not.toContain('top-secret-value');
    const row = await deps.db
      .selectFrom('tool_providers')
      .selectAll()
      .where('id', '=', secret.body.provider.id)
      .executeTakeFirstOrThrow();
    expect(row.auth_secret_enc).not.toContain('top-secret-value');
    const box = secretBoxFor(deps.config);
    expect(box.open(row.auth_secret_enc!, row.id)).toBe('top-secret-value');
    expect(box.open(row.auth_secret_enc!, 'another-id')).toBeNull();
  });

  it('lists (highest priority first), gets, updates and deletes', async () => {
    const low = (await create(admin, { ...minimal('low'), priority: -1 })).body.provider;
    const high = (await create(admin, { ...minimal('high'), priority: 100, authType: 'api_key', authSecret: 'k' })).body
      .provider;
    await allowUse(creator.id, low.id);
    await allowUse(creator.id, high.id);

    const list = await call('GET', BASE, { token: creator.token });
    expect(list.status).toBe(200);
    const ids = list.body.providers.map((p: { id: string }) => p.id);
    expect(ids.indexOf(high.id)).toBeLessThan(ids.indexOf(low.id));
    expect(JSON.stringify(list.body)).not.toMatch(/authSecret|auth_secret/);

    const got = await call('GET', `${BASE}/${low.id}`, { token: creator.token });
    expect(got).toMatchObject({ status: 200, body: { provider: { ...low, endpoint: null } } });

    const updated = await call('PUT', `${BASE}/${high.id}`, {
      token: admin.token,
      body: { description: 'd', priority: 7, authSecret: null },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({
      success: true,
      provider: { ...high, description: 'd', priority: 7, hasAuthSecret: false, updatedAt: expect.any(String) },
    });

    const deleted = await call('DELETE', `${BASE}/${low.id}`, { token: admin.token });
    expect(deleted).toMatchObject({ status: 200, body: { success: true } });
    expect((await call('GET', `${BASE}/${low.id}`, { token: admin.token })).status).toBe(404);
    expect(providerEvents).toContainEqual({ providerId: low.id });
  });

  it('shows the endpoint (often keyed) only to callers who may update the provider', async () => {
    const keyedUrl = 'https://mcp.saas.example.test/mcp?key=sk-live-secret';
    const global = (await create(admin, { name: 'saas_global', pattern: 'sg_*', endpoint: keyedUrl })).body.provider;
    const acme = (await create(acmeAdmin, { name: 'saas_acme', pattern: 'sa_*', endpoint: keyedUrl })).body.provider;
    expect(acme.endpoint, 'the tenant admin who created it sees it').toBe(keyedUrl);
    await allowUse(creator.id, global.id);
    await allowUse(creator.id, acme.id);
    const seen = async (caller: Caller, id: string) => {
      const one = await call('GET', `${BASE}/${id}`, { token: caller.token });
      const all = await call('GET', BASE, { token: caller.token });
      const listed = all.body.providers.find((p: { id: string }) => p.id === id);
      expect(listed.endpoint).toEqual(one.body.provider.endpoint);
      return one.body.provider.endpoint;
    };
    // admin: every provider; tenant_admin: its tenant's, not the global one it cannot change; agent_creator: none.
    expect([await seen(admin, global.id), await seen(admin, acme.id)]).toEqual([keyedUrl, keyedUrl]);
    expect([await seen(acmeAdmin, global.id), await seen(acmeAdmin, acme.id)]).toEqual([null, keyedUrl]);
    expect([await seen(creator, global.id), await seen(creator, acme.id)]).toEqual([null, null]);
    expect(JSON.stringify((await call('GET', BASE, { token: creator.token })).body)).not.toContain('sk-live-secret');
  });

  it('answers 400 naming the field for malformed or invalid bodies', async () => {
    const malformed = await call('POST', BASE, { token: admin.token, rawBody: '{"name": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toEqual(expect.any(String));

    const cases: [Record<string, unknown>, string][] = [
      [{ pattern: 'x_*', endpoint: 'https://x.test' }, 'name'],
      [{ ...minimal('x'), pattern: undefined }, 'pattern'],
      [{ ...minimal('x'), endpoint: 'ftp://x.test/mcp' }, 'endpoint'],
      [{ ...minimal('x'), endpoint: 'not a url' }, 'endpoint'],
      [{ ...minimal('x'), authType: 'oauth' }, 'authType'],
      [{ ...minimal('x'), priority: 'high' }, 'priority'],
      [{ ...minimal('x'), priority: 1.5 }, 'priority'],
      [{ ...minimal('x'), namePrefix: 'GitHub' }, 'namePrefix'],
      [{ ...minimal('x'), namePrefix: 'git hub' }, 'namePrefix'],
      [{ ...minimal('x'), namePrefix: '_gh' }, 'namePrefix'],
      [{ ...minimal('x'), namePrefix: '' }, 'namePrefix'],
      [{ ...minimal('x'), namePrefix: 'a'.repeat(17) }, 'namePrefix'],
    ];
    for (const [body, field] of cases) {
      const res = await create(admin, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
    const badUpdate = await call('PUT', `${BASE}/whatever`, { token: admin.token, body: { priority: 'x' } });
    expect(badUpdate.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'priority' });
  });

  it('keeps a name prefix; changing it drops the names its tools were exposed under (they are chosen again)', async () => {
    const created = await create(admin, { ...minimal('prefixed'), namePrefix: 'gh-2_x' });
    expect(created.status).toBe(201);
    expect(created.body.provider.namePrefix).toBe('gh-2_x');
    const id = created.body.provider.id as string;
    await deps.db
      .insertInto('tool_names')
      .values({ scope: '', provider_id: id, upstream_name: 'search', exposed_name: 'gh-2_x__search' })
      .execute();
    const names = () => deps.db.selectFrom('tool_names').select('exposed_name').where('provider_id', '=', id).execute();

    expect(
      (await call('PUT', `${BASE}/${id}`, { token: admin.token, body: { description: 'same prefix' } })).status,
    ).toBe(200);
    expect(await names()).toEqual([{ exposed_name: 'gh-2_x__search' }]);
    const renamed = await call('PUT', `${BASE}/${id}`, { token: admin.token, body: { namePrefix: null } });
    expect(renamed.body.provider.namePrefix).toBeNull();
    expect(await names()).toEqual([]);
  });

  it('answers 404 for unknown ids', async () => {
    for (const [method, path, body] of [
      ['GET', `${BASE}/nope`],
      ['PUT', `${BASE}/nope`, { name: 'n' }],
      ['DELETE', `${BASE}/nope`],
      ['GET', `${BASE}/nope/tools`],
    ] as const) {
      const res = await call(method, path, { token: admin.token, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
  });

  it('requires a JWT, and provider permissions for writes', async () => {
    expect((await call('GET', BASE)).status).toBe(401);
    const denied = await create(creator, minimal('creator'));
    expect(denied.status).toBe(403);
    const own = (await create(acmeAdmin, minimal('acme_only'))).body.provider;
    expect((await call('PUT', `${BASE}/${own.id}`, { token: creator.token, body: { name: 'x' } })).status).toBe(403);
    expect((await call('DELETE', `${BASE}/${own.id}`, { token: creator.token })).status).toBe(403);
  });

  it('isolates tenants: own and global providers are visible, others 404; globals are admin-only writes', async () => {
    const acme = await create(acmeAdmin, minimal('acme_tools'));
    expect(acme.body.provider.tenantId).toBe('acme');
    const global = (await create(admin, minimal('global_tools'))).body.provider;

    expect((await call('GET', `${BASE}/${acme.body.provider.id}`, { token: globexAdmin.token })).status).toBe(404);
    expect((await call('DELETE', `${BASE}/${acme.body.provider.id}`, { token: globexAdmin.token })).status).toBe(404);
    const globexList = await call('GET', BASE, { token: globexAdmin.token });
    const globexIds = globexList.body.providers.map((p: { id: string }) => p.id);
    expect(globexIds).toContain(global.id);
    expect(globexIds).not.toContain(acme.body.provider.id);

    expect(
      (await call('PUT', `${BASE}/${global.id}`, { token: acmeAdmin.token, body: { name: 'hijack' } })).status,
    ).toBe(403);
    const otherTenant = await create(acmeAdmin, { ...minimal('elsewhere'), tenantId: 'globex' });
    expect(otherTenant.status).toBe(403);
    const scoped = await create(admin, { ...minimal('scoped'), tenantId: 'globex' });
    expect(scoped.body.provider.tenantId).toBe('globex');
    expect((await call('GET', `${BASE}/${scoped.body.provider.id}`, { token: acmeAdmin.token })).status).toBe(404);
  });

  it('deleting a provider deletes its access rules and announces both changes', async () => {
    const provider = (await create(admin, minimal('cascade'))).body.provider;
    const user = await signedInUser(deps, ['agent_creator']);
    const rule = await call('POST', '/api/v1/admin/provider-access', {
      token: admin.token,
      body: { subjectType: 'user', subjectId: user.id, providerId: provider.id, action: 'allow' },
    });
    expect(rule.status).toBe(201);
    ruleEvents.length = 0;

    expect((await call('DELETE', `${BASE}/${provider.id}`, { token: admin.token })).status).toBe(200);
    expect(
      (await call('GET', `/api/v1/admin/provider-access/${rule.body.rule.id}`, { token: admin.token })).status,
    ).toBe(404);
    expect(ruleEvents).toEqual([{ subjectType: null, subjectId: null }]);
  });

  it("fetches the upstream's tools with the MCP client, sending the bearer secret", async () => {
    const provider = (
      await create(admin, {
        name: 'live',
        pattern: 'github_*',
        endpoint: mcp.url,
        authType: 'bearer',
        authSecret: 'upstream-bearer-secret',
      })
    ).body.provider;
    await allowUse(creator.id, provider.id);
    const res = await call('GET', `${BASE}/${provider.id}/tools`, { token: creator.token });
    expect(res.status).toBe(200);
    expect(res.body.tools).toEqual([
      {
        name: 'github_create_issue',
        description: 'Open an issue',
        inputSchema: expect.objectContaining({
          type: 'object',
          properties: { title: expect.objectContaining({ type: 'string' }) },
        }),
      },
      { name: 'github_list_repos', description: null, inputSchema: expect.objectContaining({ type: 'object' }) },
    ]);
    expect(mcp.requests.at(-1)?.headers.authorization).toBe('Bearer upstream-bearer-secret');
  });

  it('answers 502 UPSTREAM_ERROR when the upstream refuses the credentials, without its body', async () => {
    const provider = (
      await create(admin, {
        name: 'wrong_key',
        pattern: 'w_*',
        endpoint: mcp.url,
        authType: 'bearer',
        authSecret: 'wrong',
      })
    ).body.provider;
    const res = await call('GET', `${BASE}/${provider.id}/tools`, { token: admin.token });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      code: 'UPSTREAM_ERROR',
      message: expect.any(String),
      reason: 'upstream answered HTTP 401',
    });
  });

  it('sends api_key secrets as X-Api-Key', async () => {
    const keyed = await startMcpServer({
      auth: { apiKey: 'the-api-key' },
      tools: [{ name: 'k_tool', handler: () => 'ok' }],
    });
    try {
      const provider = (
        await create(admin, {
          name: 'keyed',
          pattern: 'k_*',
          endpoint: keyed.url,
          authType: 'api_key',
          authSecret: 'the-api-key',
        })
      ).body.provider;
      const res = await call('GET', `${BASE}/${provider.id}/tools`, { token: admin.token });
      expect(res.status).toBe(200);
      expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(['k_tool']);
      expect(keyed.requests[0]?.headers['x-api-key']).toBe('the-api-key');
      expect(keyed.requests[0]?.headers.authorization).toBeUndefined();
    } finally {
      await keyed.close();
    }
  });

  it('answers 502 with the refusal when nothing listens at the endpoint (no wait for a timeout)', async () => {
    const provider = (await create(admin, { name: 'closed', pattern: 'c_*', endpoint: await closedPortUrl() })).body
      .provider;
    const res = await call('GET', `${BASE}/${provider.id}/tools`, { token: admin.token });
    expect(res.status).toBe(502);
    // The refusal itself is the reason, not a timeout that ran out.
    expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR', reason: 'connection failed (ECONNREFUSED)' });
  });

  it('lists tools through the egress policy: under public-only a loopback upstream is never contacted (403 EGRESS_REFUSED)', async () => {
    const app = openApiApp();
    app.onError(errorHandler());
    app.route(BASE, toolProvidersRoutes({ ...deps, config: { ...deps.config, EGRESS_POLICY: 'public-only' } }));
    const provider = (
      await create(admin, {
        name: 'loopback',
        pattern: 'l_*',
        endpoint: mcp.url,
        authType: 'bearer',
        authSecret: 'upstream-bearer-secret',
      })
    ).body.provider;
    const before = mcp.requests.length;
    const res = await testClient(app)('GET', `${BASE}/${provider.id}/tools`, { token: admin.token });
    // A refusal is the caller's 403 with the one error body (issue 11), not a 502 upstream failure.
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'EGRESS_REFUSED', message: expect.stringMatching(/egress policy/) });
    expect(res.body.tools).toBeUndefined();
    expect(mcp.requests.length).toBe(before);
  });

  // The upstream never answers: only the tool-list timeout can end the call, and a route that
  // waited on fails by this test's 30 s hang bound.
  it(
    'answers 504 UPSTREAM_TIMEOUT at its bound when the upstream never answers, hanging up on it',
    { timeout: 30_000 },
    async () => {
      const silent = await startSilentServer();
      try {
        const app = openApiApp();
        app.onError(errorHandler());
        app.route(BASE, toolProvidersRoutes(deps, { toolListTimeoutMs: 300 }));
        const provider = (await create(admin, { name: 'silent', pattern: 's_*', endpoint: silent.url })).body.provider;
        const res = await testClient(app)('GET', `${BASE}/${provider.id}/tools`, { token: admin.token });
        expect(res.status).toBe(504);
        expect(res.body.code).toBe('UPSTREAM_TIMEOUT');
        await vi.waitFor(() => expect(silent.hungUp()).toBe(true), { timeout: 10_000, interval: 20 });
      } finally {
        await silent.close();
      }
    },
  );
});
