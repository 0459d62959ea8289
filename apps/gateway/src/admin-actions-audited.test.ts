import { newId } from '@agentgw/core';
import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, tokenFor } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';
import { hostJsonApi, type Json } from './host-json-api.js';

const PROVIDER_SECRET = 'upstream-bearer-secret-0123456789';
const USER_PASSWORD = 'new-user-password-42';
const OAUTH_CLIENT_SECRET = 'oauth-app-client-secret-42';

// Issue 30.6: what the admin API changes is in the audit log as admin actions (the admin as the
// acting user, no agent, no end user), never with a secret (runtime token, API key, upstream secret, password).
describe('admin actions in the audit log (all-in-one)', () => {
  let deps: TestDeps;
  let host: Host;
  let adminId = '';
  let adminToken = '';
  const api = hostJsonApi(() => host);
  const ok = async (method: string, path: string, body?: Json) => {
    const res = await api(method, path, adminToken, body);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    return res.body;
  };

  beforeAll(async () => {
    deps = await createTestDeps();
    host = await createGatewayHost(deps);
    await host.start();
    const admin = await createUser(deps, { email: `admin-${newId()}@example.com`, roles: ['admin'] });
    adminId = admin.id;
    adminToken = await tokenFor(deps, admin);
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await deps?.close();
  });

  it('records provider, access rule, agent (kill switch included), API key, user and OAuth app changes as admin actions, with no secret', async () => {
    const provider = (
      await ok('POST', '/api/v1/admin/tool-providers', {
        name: 'audited',
        pattern: '*',
        endpoint: 'http://127.0.0.1:9/mcp',
        authType: 'bearer',
        authSecret: PROVIDER_SECRET,
      })
    ).provider as Json;
    await ok('PUT', `/api/v1/admin/tool-providers/${provider.id}`, { authSecret: `${PROVIDER_SECRET}-2` });
    const created = await ok('POST', '/api/v1/admin/agents', {
      name: `bot-${newId().slice(0, 8)}`,
      upstreamUrl: 'http://127.0.0.1:9/mcp',
    });
    const agent = created.agent as Json;
    const rule = (
      await ok('POST', '/api/v1/admin/provider-access', {
        subjectType: 'agent',
        subjectId: agent.id,
        providerId: provider.id,
        action: 'allow',
        toolPattern: '*',
      })
    ).rule as Json;
    await ok('PUT', `/api/v1/admin/provider-access/${rule.id}`, { toolPattern: 'read_*' });
    await ok('DELETE', `/api/v1/admin/provider-access/${rule.id}`);
    await ok('POST', `/api/v1/admin/agents/${agent.id}/disable`);
    const regenerated = await ok('POST', `/api/v1/admin/agents/${agent.id}/regenerate-token`);
    await ok('DELETE', `/api/v1/admin/agents/${agent.id}`);
    const keyed = await ok('POST', '/api/v1/admin/api-keys', { name: 'ci' });
    await ok('DELETE', `/api/v1/admin/api-keys/${(keyed.apiKey as Json).id}`);
    const user = (
      await ok('POST', '/api/v1/admin/users', { email: `u-${newId()}@example.com`, password: USER_PASSWORD })
    ).user as Json;
    await ok('POST', `/api/v1/admin/users/${user.id}/roles`, { role: 'tenant_admin' });
    await ok('PUT', `/api/v1/admin/users/${user.id}`, { password: `${USER_PASSWORD}-2` });
    await ok('DELETE', `/api/v1/admin/tool-providers/${provider.id}`);
    const oauthApp = (
      await ok('POST', '/api/v1/credential-providers', {
        name: 'CRM',
        serviceType: 'crm_audited',
        authType: 'oauth2',
        config: {
          clientId: 'crm-client',
          clientSecret: OAUTH_CLIENT_SECRET,
          tokenUrl: 'https://auth.example.test/token',
        },
      })
    ).provider as Json;
    await ok('DELETE', `/api/v1/credential-providers/${oauthApp.id}`);

    const logged = async () => {
      const res = await api('GET', `/api/v1/audit/logs?user_id=${adminId}&limit=100`, adminToken);
      expect(res.status).toBe(200);
      return res.body.data as Json[];
    };
    const expected = [
      'admin:tool_provider_created',
      'admin:tool_provider_updated',
      'admin:agent_created',
      'admin:provider_access_created',
      'admin:provider_access_updated',
      'admin:provider_access_deleted',
      'admin:agent_disabled',
      'admin:agent_token_regenerated',
      'admin:agent_deleted',
      'admin:api_key_created',
      'admin:api_key_revoked',
      'admin:user_created',
      'admin:user_role_added',
      'admin:user_updated',
      'admin:tool_provider_deleted',
      'admin:credential_provider_created',
      'admin:credential_provider_deleted',
    ];
    await expect.poll(async () => (await logged()).map((e) => e.toolName).reverse()).toEqual(expected);
    const entries = await logged();
    for (const entry of entries)
      expect(entry).toMatchObject({ userId: adminId, agentId: null, endUserId: null, status: 'completed' });
    const byName = (name: string) => entries.find((e) => e.toolName === `admin:${name}`);
    expect(byName('tool_provider_updated')).toMatchObject({
      providerId: provider.id,
      arguments: { fields: ['authSecret'] },
    });
    expect(byName('agent_disabled')?.arguments).toEqual({ agentId: agent.id });
    expect(byName('user_role_added')?.arguments).toMatchObject({ userId: user.id, role: 'tenant_admin' });
    const stored = JSON.stringify(entries);
    for (const secret of [
      PROVIDER_SECRET,
      created.runtime_token as string,
      regenerated.runtime_token as string,
      keyed.key as string,
      USER_PASSWORD,
      OAUTH_CLIENT_SECRET,
    ])
      expect(stored).not.toContain(secret);
  });
});
