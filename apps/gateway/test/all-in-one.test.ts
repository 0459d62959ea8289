import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { authHeaders, createUser, startRecordingUpstream, tokenFor, type RecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayApp } from '../src/all-in-one.js';

describe.each(testBackends())('createGatewayApp (%s)', (backend) => {
  let deps: TestDeps;
  let upstream: RecordingUpstream;
  let app: ReturnType<typeof createGatewayApp>;
  beforeAll(async () => {
    deps = await createTestDeps({ backend });
    upstream = await startRecordingUpstream();
    app = createGatewayApp(deps);
  });
  afterAll(async () => {
    await upstream.close();
    await deps.close();
  });

  it('answers one /health for the whole process', async () => {
    const res = await app.request('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', service: 'gateway', checks: { database: 'ok', redis: 'in-process' } });
  });

  it("mounts every service's routes, each behind its own auth, and answers unknown paths with the JSON 404", async () => {
    for (const path of ['/api/v1/admin/agents', '/api/v1/credentials', '/api/v1/agents/some-agent']) {
      const res = await app.request(path);
      expect(res.status, path).toBe(401);
      expect(await res.json(), path).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    }
    const missing = await app.request('/api/v1/no-such-thing');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('lets invoke-proxy resolve credentials through the vault in-process', async () => {
    const user = await createUser(deps, { email: 'maker@example.com', roles: ['admin'] });
    const headers = authHeaders(await tokenFor(deps, user));
    const created = await app.request('/api/v1/admin/agents', {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'crm-bot', upstreamUrl: `${upstream.url}/run`, requiredCredentials: [{ serviceType: 'crm' }] }),
    });
    expect(created.status).toBe(201);
    const { agent } = (await created.json()) as { agent: { id: string } };

    const before = await app.request(`/api/v1/agents/${agent.id}/invoke`, { method: 'POST', headers, body: JSON.stringify({ message: 'hi' }) });
    expect(before.status).toBe(401);
    expect(await before.json()).toMatchObject({ code: 'CREDENTIALS_REQUIRED', missing: ['crm'] });
    expect(upstream.requests).toHaveLength(0);

    const stored = await app.request('/api/v1/credentials/apikey', {
      method: 'POST',
      headers,
      body: JSON.stringify({ serviceType: 'crm', apiKey: 'crm-key-123' }),
    });
    expect(stored.status).toBe(201);

    const invoked = await app.request(`/api/v1/agents/${agent.id}/invoke`, { method: 'POST', headers, body: JSON.stringify({ message: 'hi' }) });
    expect(invoked.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.headers['x-credential-crm']).toBe('crm-key-123');
    expect(upstream.requests[0]?.headers['x-user-id']).toBe(user.id);
  });
});
