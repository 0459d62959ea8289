import { newId } from '@agentgw/core';
import {
  createUser,
  freePort,
  startProtectedMcpServer,
  startRecordingUpstream,
  tokenFor,
  type ProtectedMcpServer,
  type RecordingUpstream,
} from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asUserGateway, connectUrl, RESOURCE, type AsUserGateway, type Json } from './as-user.fixtures.js';

const TENANT = 'tenant_t';

/** A tenant-T account with `roles`: its id and token. */
async function tenantUser(
  gateway: AsUserGateway,
  roles: 'tenant_admin'[] | [],
): Promise<{ id: string; token: string }> {
  const user = await createUser(gateway.deps, { email: `${newId()}@t.example`, roles, tenantId: TENANT });
  return { id: user.id, token: await tokenFor(gateway.deps, user) };
}

/** An allow rule for every tool of the provider, written as `adminToken`. */
async function allow(gateway: AsUserGateway, adminToken: string, subjectId: string, providerId: string): Promise<void> {
  const rule = await gateway.api('POST', '/api/v1/admin/provider-access', adminToken, {
    subjectType: 'user',
    subjectId,
    providerId,
    action: 'allow',
    toolPattern: '*',
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(201);
}

// Issue 30.3 at call time: a tenant that re-declares a global service type with its own credential
// provider, and points a per-user tool provider of its own at an endpoint its admin runs, must not
// receive the tokens its users connected through the global credential provider. The attacker's
// endpoint accepts the very tokens the user holds (same issuer, same resource), so a token sent
// there would show up in its log under the user's name.
describe('a credential is released at call time only to a recipient of its scope (all-in-one)', () => {
  const gateway = asUserGateway({ credentialProvider: { serviceType: 'github', name: 'GitHub (global)' } });
  const { api } = gateway;
  let attacker: ProtectedMcpServer;

  beforeAll(async () => {
    const port = await freePort();
    attacker = await startProtectedMcpServer({
      issuer: gateway.oidc.issuer,
      jwksUri: gateway.oidc.jwksUri,
      resource: RESOURCE,
      port,
    });
  });
  afterAll(() => attacker?.close());

  it("withholds a user's token connected through the global provider from the tenant's own provider of that type", async () => {
    const alice = await tenantUser(gateway, []);
    await allow(gateway, gateway.adminToken, alice.id, gateway.providerId);
    await gateway.connect(alice.token, 'alice', 'github');
    // Connected through the global credential provider: the global tool provider reaches the upstream as alice.
    expect((await gateway.whoami(alice.token)).body.result.content[0].text).toBe('you are alice');

    // Tenant T's admin re-declares `github` and points a per-user provider of the tenant at their endpoint.
    const tenantAdmin = await tenantUser(gateway, ['tenant_admin']);
    const declared = await api('POST', '/api/v1/credential-providers', tenantAdmin.token, {
      name: 'GitHub (tenant T)',
      serviceType: 'github',
      authType: 'oauth2',
      config: { clientId: 'tenant-client', clientSecret: 'tenant-secret', scopes: [], issuer: gateway.oidc.issuer },
    });
    expect(declared.status, JSON.stringify(declared.body)).toBe(201);
    const created = await api('POST', '/api/v1/admin/tool-providers', tenantAdmin.token, {
      name: 'evil',
      pattern: '*',
      endpoint: attacker.url,
      authType: 'user_oauth',
      credentialServiceType: 'github',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const evil = created.body.provider.id as string;
    await allow(gateway, tenantAdmin.token, alice.id, evil);

    const proxied = (method: string, params: Json = {}) =>
      api('POST', `/api/v1/mcp-proxy/${evil}/mcp`, alice.token, { jsonrpc: '2.0', id: 1, method, params });
    await proxied('tools/list');
    await gateway.unified(alice.token, 'tools/list');
    const call = await proxied('tools/call', { name: 'whoami', arguments: {} });

    expect(attacker.requests.filter((r) => r.subject !== null)).toEqual([]);
    expect(attacker.identities).toEqual([]);
    expect(call.status, JSON.stringify(call.body)).toBe(403);
    expect(call.body.error).toMatchObject({
      data: { code: 'CREDENTIALS_REQUIRED', missing: ['github'], authUrl: connectUrl('github') },
    });
  });
});

// The invoke neighbour: an agent receives its required credentials as X-Credential-<type> (spec,
// "Invoke"), but an mcp_oauth token is bound to the MCP server it was issued for (RFC 8707); an agent
// of the user's own tenant naming that type must not receive a token it could replay there as the user.
describe('an mcp_oauth token never goes to an agent runtime (all-in-one)', () => {
  const gateway = asUserGateway();
  const { api } = gateway;
  let runtime: RecordingUpstream;

  beforeAll(async () => {
    runtime = await startRecordingUpstream();
  });
  afterAll(() => runtime?.close());

  it("answers CREDENTIALS_REQUIRED to the invoke and sends the runtime nothing, while the MCP server's own provider still reaches it as the user", async () => {
    const created = await api('POST', '/api/v1/admin/tool-providers', gateway.adminToken, {
      name: 'Protected tools',
      pattern: '*',
      endpoint: gateway.upstream.url,
      authType: 'mcp_oauth',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const serviceType = created.body.provider.credentialServiceType as string;
    const alice = await tenantUser(gateway, []);
    await allow(gateway, gateway.adminToken, alice.id, created.body.provider.id as string);
    await gateway.connect(alice.token, 'alice', serviceType);

    const tenantAdmin = await tenantUser(gateway, ['tenant_admin']);
    const agent = await api('POST', '/api/v1/admin/agents', tenantAdmin.token, {
      name: 'helper',
      upstreamUrl: `${runtime.url}/run`,
      requiredCredentials: [{ serviceType }],
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);

    const invoked = await api('POST', `/api/v1/agents/${agent.body.agent.id as string}/invoke`, alice.token, {
      message: 'hi',
    });
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(401);
    expect(invoked.body).toMatchObject({ code: 'CREDENTIALS_REQUIRED', missing: [serviceType] });
    expect(runtime.requests).toEqual([]);
    expect((await gateway.whoami(alice.token)).body.result.content[0].text).toBe('you are alice');
  });
});
