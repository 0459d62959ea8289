import { createUser, startMcpServer, tokenFor, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { statelessRpc, toolNames } from './stateless-rpc.js';

// Issue 19.2: a tenant admin's same-pattern, higher-priority provider must not capture a
// platform admin's calls (routing, lists, resources and prompts stay in the acting tenant).
let gw: GatewayUnderTest;
let globalUpstream: McpFixture;
let tenantUpstream: McpFixture;
let ids: { global: string; tenant: string };
let tenantAdminToken: string;
let strangerToken: string;

const unified = () => `${gw.url}/api/v1/mcp/mcp`;
const proxy = (id: string) => `${gw.url}/api/v1/mcp-proxy/${id}/mcp`;
const as = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  const fixture = (name: string) =>
    startMcpServer({
      name,
      tools: [
        { name: 'read_file', handler: (args) => `${name}:${JSON.stringify(args)}` },
        { name: `${name}_only`, handler: () => `${name} only` },
      ],
      setup: (server) => {
        server.registerResource('notes', 'file:///notes', { mimeType: 'text/plain' }, async () => ({
          contents: [{ uri: 'file:///notes', text: `${name} notes` }],
        }));
        server.registerPrompt('greet', { description: name }, () => ({
          messages: [{ role: 'user', content: { type: 'text', text: `${name} prompt` } }],
        }));
      },
    });
  [globalUpstream, tenantUpstream] = await Promise.all([fixture('global'), fixture('tenant')]);
  gw = await startGatewayUnderTest();
  const { catalog, admin, deps } = gw;
  const tenantAdminUser = await createUser(deps, {
    email: `t1-admin-${Date.now()}@example.com`,
    roles: ['tenant_admin'],
    tenantId: 't1',
  });
  tenantAdminToken = await tokenFor(deps, tenantAdminUser);
  const strangerUser = await createUser(deps, {
    email: `t2-admin-${Date.now()}@example.com`,
    roles: ['tenant_admin'],
    tenantId: 't2',
  });
  strangerToken = await tokenFor(deps, strangerUser);
  const tenantAdmin = await deps.auth.authenticate(new Headers(as(tenantAdminToken)), 'jwt');
  const g = await catalog.providers.create(admin, {
    name: 'global',
    pattern: '*',
    endpoint: globalUpstream.url,
    authType: 'none',
    priority: 0,
  });
  // The tenant admin's provider: same pattern, higher priority.
  const t = await catalog.providers.create(tenantAdmin, {
    name: 'tenant',
    pattern: '*',
    endpoint: tenantUpstream.url,
    authType: 'none',
    priority: 100,
  });
  ids = { global: g.id, tenant: t.id };
  // Both admins may call anything (user rules for every provider).
  await catalog.rules.create(admin, {
    subjectType: 'user',
    subjectId: admin.userId!,
    providerId: '*',
    action: 'allow',
    toolPattern: '*',
  });
  await catalog.rules.create(tenantAdmin, {
    subjectType: 'user',
    subjectId: tenantAdmin.userId!,
    providerId: '*',
    action: 'allow',
    toolPattern: '*',
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([globalUpstream?.close(), tenantUpstream?.close()]);
});

describe('routing stays in the tenant a call acts in', () => {
  it("keeps a tenant provider's tools out of the platform admin's tools/list and routes its call to the global provider", async () => {
    const list = await statelessRpc(unified(), as(gw.adminToken), 'tools/list');
    expect(list.status).toBe(200);
    expect(toolNames(list)).toEqual(['global_only', 'read_file']);

    const call = await statelessRpc(unified(), as(gw.adminToken), 'tools/call', { name: 'read_file', arguments: {} });
    expect(call.body.result).toMatchObject({ content: [{ text: 'global:{}' }] });
    expect(globalUpstream.calls.at(-1)?.headers['x-user-id']).toBe(gw.admin.userId);
    expect(tenantUpstream.calls).toEqual([]);
    // A name only the tenant provider offers is not routed there either.
    await statelessRpc(unified(), as(gw.adminToken), 'tools/call', { name: 'tenant_only', arguments: {} });
    expect(tenantUpstream.calls).toEqual([]);
  });

  it('merges and reads resources and prompts in the acting tenant only', async () => {
    const resources = await statelessRpc(unified(), as(gw.adminToken), 'resources/read', { uri: 'file:///notes' });
    expect(resources.body.result).toMatchObject({ contents: [{ text: 'global notes' }] });
    const prompt = await statelessRpc(unified(), as(gw.adminToken), 'prompts/get', { name: 'greet' });
    expect(prompt.body.result).toMatchObject({ messages: [{ content: { text: 'global prompt' } }] });
    const prompts = await statelessRpc(unified(), as(gw.adminToken), 'prompts/list');
    expect(prompts.body.result?.prompts).toEqual([expect.objectContaining({ description: 'global' })]);
    expect(
      tenantUpstream.requests.filter(
        (r) => JSON.stringify(r.body).includes('resources/read') || JSON.stringify(r.body).includes('prompts/get'),
      ),
    ).toEqual([]);
  });

  it("routes the tenant admin's own calls to the tenant's provider (its priority applies inside its tenant)", async () => {
    const call = await statelessRpc(unified(), as(tenantAdminToken), 'tools/call', {
      name: 'read_file',
      arguments: {},
    });
    expect(call.body.result).toMatchObject({ content: [{ text: 'tenant:{}' }] });
    expect(tenantUpstream.calls.at(-1)?.headers['x-tenant-id']).toBe('t1');
  });

  it("lets an admin name another tenant's provider explicitly (proxy, providers=), and nobody else", async () => {
    const before = tenantUpstream.calls.length;
    const viaProxy = await statelessRpc(proxy(ids.tenant), as(gw.adminToken), 'tools/call', {
      name: 'read_file',
      arguments: {},
    });
    expect(viaProxy.body.result).toMatchObject({ content: [{ text: 'tenant:{}' }] });
    const named = await statelessRpc(`${unified()}?providers=${ids.tenant}`, as(gw.adminToken), 'tools/list');
    // Names live in the scope the call acts in: the admin's `read_file` is the global one's already.
    expect(toolNames(named)).toEqual(['tenant__read_file', 'tenant_only']);
    expect(tenantUpstream.calls.length).toBe(before + 1);

    // Another tenant's admin: 404 on the proxy, and `providers=` naming it narrows to nothing.
    const refused = await statelessRpc(proxy(ids.tenant), as(strangerToken), 'tools/list');
    expect(refused.status).toBe(404);
    expect(
      toolNames(await statelessRpc(`${unified()}?providers=${ids.tenant}`, as(strangerToken), 'tools/list')),
    ).toEqual([]);
  });

  it("addresses the proxy by a provider's name: the caller's tenant first, then global; never another tenant's", async () => {
    const read = (url: string, token: string) =>
      statelessRpc(url, as(token), 'tools/call', { name: 'read_file', arguments: {} });
    expect((await read(proxy('tenant'), tenantAdminToken)).body.result).toMatchObject({
      content: [{ text: 'tenant:{}' }],
    });
    expect((await read(proxy('global'), tenantAdminToken)).body.result).toMatchObject({
      content: [{ text: 'global:{}' }],
    });
    expect((await read(proxy('global'), gw.adminToken)).body.result).toMatchObject({
      content: [{ text: 'global:{}' }],
    });
    const unknown = await statelessRpc(proxy('no-such-provider'), as(strangerToken), 'tools/list');
    expect(unknown.status).toBe(404);
    // A name from another tenant answers exactly as an unknown one, for a platform admin too (names route in the acting scope).
    for (const token of [strangerToken, gw.adminToken]) {
      const refused = await statelessRpc(proxy('tenant'), as(token), 'tools/list');
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 404, body: unknown.body });
    }
    // An ambiguous name in the caller's tenant is the same 404; a unique one in it answers.
    const stranger = await gw.deps.auth.authenticate(new Headers(as(strangerToken)), 'jwt');
    const add = (name: string) =>
      gw.catalog.providers.create(stranger, {
        name,
        pattern: 'twin_*',
        endpoint: globalUpstream.url,
        authType: 'none',
        priority: 0,
      });
    await Promise.all([add('twin'), add('twin'), add('single')]);
    const ambiguous = await statelessRpc(proxy('twin'), as(strangerToken), 'tools/list');
    expect({ status: ambiguous.status, body: ambiguous.body }).toEqual({ status: 404, body: unknown.body });
    expect((await statelessRpc(proxy('single'), as(strangerToken), 'tools/list')).status).toBe(200);
  });

  it("reports colliding names over the caller's own routing set, as named in the tenant it acts in", async () => {
    const collisions = async (token: string) =>
      (
        (await (await fetch(`${gw.url}/api/v1/mcp/tool-collisions`, { headers: as(token) })).json()) as {
          data: { exposedName: string; providerId: string }[];
        }
      ).data;
    // The tenant admin routes over both (its provider came first there: it keeps the bare name); the platform admin over the global one alone.
    expect(await collisions(tenantAdminToken)).toEqual([
      expect.objectContaining({ exposedName: 'global__read_file', providerId: ids.global }),
      expect.objectContaining({ exposedName: 'read_file', providerId: ids.tenant }),
    ]);
    expect(await collisions(gw.adminToken)).toEqual([]);
  });
});
