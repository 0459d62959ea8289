import { startRecordingUpstream, type RecordingUpstream } from '@agentgw/testkit';
import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { createVault, directCredentialResolver } from '@agentgw/credentials';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createInvokeProxyService } from './service.js';
import { insertAgent, invokeRequest, signedInUser, type SignedInUser } from './invoke-proxy.fixtures.js';

/** invoke-proxy under a given egress configuration (pglite: the policy does not depend on the database). */
async function appWith(env: Record<string, string>) {
  const deps = await createTestDeps({ backend: 'pglite', env });
  const vault = createVault(deps);
  const app = await testHost(createInvokeProxyService({ credentials: () => directCredentialResolver(vault) }), deps);
  return { deps, vault, app };
}

describe('invoke egress policy', () => {
  const opened: TestDeps[] = [];
  const upstreams: RecordingUpstream[] = [];
  let strict: Awaited<ReturnType<typeof appWith>>;
  let lenient: Awaited<ReturnType<typeof appWith>>;
  let alice: SignedInUser;
  let aliceLenient: SignedInUser;

  beforeAll(async () => {
    strict = await appWith({ EGRESS_POLICY: 'public-only' });
    lenient = await appWith({ EGRESS_POLICY: 'allow-private' });
    opened.push(strict.deps, lenient.deps);
    alice = await signedInUser(strict.deps, {
      email: 'alice@example.com',
      roles: ['agent_creator'],
      tenantId: 'tenant-a',
    });
    aliceLenient = await signedInUser(lenient.deps, {
      email: 'alice@example.com',
      roles: ['agent_creator'],
      tenantId: 'tenant-a',
    });
    await strict.vault.store({
      userId: alice.id,
      tenantId: 'tenant-a',
      serviceType: 'github',
      kind: 'api_key',
      secret: 'gh-alice-secret',
      expiresAt: null,
    });
  });
  afterEach(async () => {
    await Promise.all(upstreams.splice(0).map((u) => u.close()));
  });
  afterAll(async () => {
    await Promise.all(opened.map((d) => d.close()));
  });

  const upstream = async (...args: Parameters<typeof startRecordingUpstream>) => {
    const u = await startRecordingUpstream(...args);
    upstreams.push(u);
    return u;
  };

  it('public-only: an agent on loopback is refused with 403 EGRESS_REFUSED and nothing (no credential) reaches it', async () => {
    const up = await upstream();
    const agent = await insertAgent(strict.deps, {
      upstreamUrl: up.url,
      tenantId: 'tenant-a',
      requiredCredentials: [{ serviceType: 'github' }],
    });
    const res = await strict.app.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(alice.token));
    expect(res.status).toBe(403);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'EGRESS_REFUSED', reason: 'private-address' });
    expect(JSON.stringify(body)).not.toContain('127.0.0.1');
    expect(up.requests).toHaveLength(0);
  });

  it('public-only: a loopback name (localhost) is refused after resolution too', async () => {
    const up = await upstream();
    const agent = await insertAgent(strict.deps, {
      upstreamUrl: up.url.replace('127.0.0.1', 'localhost'),
      tenantId: 'tenant-a',
    });
    const res = await strict.app.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(alice.token));
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'EGRESS_REFUSED' });
    expect(up.requests).toHaveLength(0);
  });

  it('every policy: the metadata address is refused (403), never a 502', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://metadata.google.internal/computeMetadata/v1/',
    ]) {
      const agent = await insertAgent(lenient.deps, { upstreamUrl: url, tenantId: 'tenant-a' });
      const res = await lenient.app.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(aliceLenient.token));
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'EGRESS_REFUSED', reason: 'metadata' });
    }
  });

  it('allow-private: loopback works, and a redirect (to metadata) is not followed', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    });
    const agent = await insertAgent(lenient.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    const res = await lenient.app.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(aliceLenient.token));
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ success: false, upstream_status: 302 });
    expect(up.requests).toHaveLength(1);
  });

  it('EGRESS_ALLOW lets an operator-listed loopback upstream through under public-only', async () => {
    const allowed = await appWith({ EGRESS_POLICY: 'public-only', EGRESS_ALLOW: '127.0.0.0/8' });
    opened.push(allowed.deps);
    const bob = await signedInUser(allowed.deps, {
      email: 'bob@example.com',
      roles: ['agent_creator'],
      tenantId: 'tenant-a',
    });
    const up = await upstream();
    const agent = await insertAgent(allowed.deps, { upstreamUrl: up.url, tenantId: 'tenant-a' });
    const res = await allowed.app.request(`/api/v1/agents/${agent.id}/invoke`, invokeRequest(bob.token));
    expect(res.status).toBe(200);
    expect(up.requests).toHaveLength(1);
  });
});
