import { privateScope } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import { json, type CredentialAuthType } from '@agentgw/db';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser } from '@agentgw/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVault, type CredentialRecipient, type Vault } from './index.js';

const MCP_SERVER = 'https://mcp.example.test/mcp';

// What the vault releases to each kind of recipient (mayRelease), for one user of tenant `acme` holding:
// `crm` (a key; acme declared the type), `notes` (a key; nobody declared it), `gh` (an OAuth token
// connected through the global credential provider) and `mcp` (an mcp_oauth token for MCP_SERVER).
describe.each(testBackends())('vault resolve per recipient (%s)', (backend) => {
  let deps: TestDeps;
  let vault: Vault;
  let userId: string;

  const declare = async (serviceType: string, tenantId: string | null, authType: CredentialAuthType, config = {}) => {
    const id = newId();
    await deps.db
      .insertInto('credential_providers')
      .values({
        id,
        name: serviceType,
        service_type: serviceType,
        auth_type: authType,
        description: null,
        config: json(config),
        tenant_id: tenantId,
      })
      .execute();
    return id;
  };
  const connectOAuth = (serviceType: string, providerId: string) =>
    vault.storeOAuth({
      userId,
      tenantId: 'acme',
      serviceType,
      providerId,
      tokens: { accessToken: `${serviceType}-token`, refreshToken: null, expiresAt: null, scope: null },
    });

  beforeEach(async () => {
    deps = await createTestDeps({ backend });
    vault = createVault(deps);
    userId = (await createUser(deps, { email: `${newId()}@acme.example`, roles: [], tenantId: 'acme' })).id;
    await declare('crm', 'acme', 'api_key');
    for (const serviceType of ['crm', 'notes'])
      await vault.store({
        userId,
        tenantId: 'acme',
        serviceType,
        kind: 'api_key',
        secret: `${serviceType}-key`,
        expiresAt: null,
      });
    await connectOAuth('gh', await declare('gh', null, 'oauth2', { clientId: 'c' }));
    const mcp = await declare('mcp', null, 'oauth2', {
      clientId: 'c',
      clientRegistration: 'dynamic',
      resource: MCP_SERVER,
    });
    await connectOAuth('mcp', mcp);
  });
  afterEach(async () => {
    await deps.close();
  });

  const released = async (recipient: CredentialRecipient) =>
    Object.keys(
      (await vault.resolve({ userId, tenantId: 'acme', serviceTypes: ['crm', 'notes', 'gh', 'mcp'], recipient }))
        .credentials,
    ).sort();

  it('gives the owner all of theirs', async () => {
    expect(await released({ kind: 'owner' })).toEqual(['crm', 'gh', 'mcp', 'notes']);
  });

  it("gives a tool provider of the user's tenant only the types the tenant declared", async () => {
    expect(await released({ kind: 'tool_provider', tenantId: 'acme', endpoint: MCP_SERVER })).toEqual(['crm']);
  });

  it('gives an upstream of another tenant nothing, whatever it names', async () => {
    for (const kind of ['tool_provider', 'agent'] as const)
      expect(await released({ kind, tenantId: 'globex', endpoint: MCP_SERVER })).toEqual([]);
  });

  it('sends the mcp_oauth token only to its MCP server', async () => {
    expect(await released({ kind: 'agent', tenantId: 'acme', endpoint: 'https://agent.example.test/' })).toEqual([
      'crm',
      'gh',
      'notes',
    ]);
    expect(await released({ kind: 'tool_provider', tenantId: null, endpoint: MCP_SERVER })).toEqual([
      'crm',
      'gh',
      'mcp',
      'notes',
    ]);
  });

  it("gives a tenant-less user's own private agent their credentials, and nobody else's private agent", async () => {
    const bob = (await createUser(deps, { email: `${newId()}@self.example`, roles: ['agent_creator'] })).id;
    await vault.store({
      userId: bob,
      tenantId: null,
      serviceType: 'notes',
      kind: 'api_key',
      secret: 'k',
      expiresAt: null,
    });
    const toAgentOf = (owner: string) =>
      vault.resolve({
        userId: bob,
        tenantId: null,
        serviceTypes: ['notes'],
        recipient: { kind: 'agent', tenantId: privateScope(owner), endpoint: 'https://agent.example.test/' },
      });
    expect((await toAgentOf(bob)).credentials).toEqual({ notes: 'k' });
    expect((await toAgentOf(userId)).credentials).toEqual({});
  });

  it('withholds an OAuth token once the tenant re-declares its type: it was obtained through another provider', async () => {
    await declare('gh', 'acme', 'oauth2', { clientId: 'tenant-client' });
    const answer = await vault.resolve({
      userId,
      tenantId: 'acme',
      serviceTypes: ['gh'],
      recipient: { kind: 'agent', tenantId: 'acme', endpoint: 'https://agent.example.test/' },
    });
    expect(answer).toEqual({
      credentials: {},
      missing: ['gh'],
      authUrls: { gh: 'http://localhost:7521/api/v1/credentials/oauth/gh/auth' },
    });
  });
});
