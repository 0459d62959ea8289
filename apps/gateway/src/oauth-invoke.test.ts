import { secretBoxFor } from '@agentgw/auth';
import { ManualClock, newId } from '@agentgw/core';
import { json } from '@agentgw/db';
import { testBackends } from '@agentgw/db/testing';
import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import {
  authHeaders,
  createUser,
  startOidcServer,
  startRecordingUpstream,
  tokenFor,
  type OidcServer,
  type RecordingUpstream,
} from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';

const PUBLIC = 'http://gateway.test';
const CLIENT = { clientId: 'agentgw', clientSecret: 'client-secret-of-the-gateway' };
const CALLBACK = `${PUBLIC}/api/v1/credentials/oauth/acme/callback`;

// The all-in-one end to end: a user connects a service through the vault's OAuth flow (a real
// OpenID provider on loopback), invoke injects X-Credential-acme with the token, the token is
// refreshed when it nears expiry, and once the provider revokes the grant the call answers
// CREDENTIALS_REQUIRED with the connect URL and the credential reads needs_reconnect.
describe.each(testBackends())('OAuth credentials through invoke, all-in-one (%s)', (backend) => {
  let deps: TestDeps;
  let oidc: OidcServer;
  let upstream: RecordingUpstream;
  let host: Host;
  const clock = new ManualClock(new Date());

  beforeAll(async () => {
    oidc = await startOidcServer({ clients: [{ ...CLIENT, redirectUris: [CALLBACK] }], accessTokenTtlSeconds: 600 });
    deps = await createTestDeps({ backend, clock, env: { GATEWAY_PUBLIC_URL: PUBLIC } });
    upstream = await startRecordingUpstream();
    host = await createGatewayHost(deps);
    await host.start();
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await upstream?.close();
    await deps?.close();
    await oidc?.close();
  });

  const request = (path: string, headers: Record<string, string>, init: RequestInit = {}) =>
    host.app.request(path.startsWith('http') ? new URL(path).pathname + new URL(path).search : path, {
      ...init,
      headers,
    });

  it('connects, injects the fresh token, refreshes it once near expiry, and asks to reconnect after revocation', async () => {
    const id = newId();
    await deps.db
      .insertInto('credential_providers')
      .values({
        id,
        name: 'Acme',
        service_type: 'acme',
        auth_type: 'oauth2',
        description: null,
        config: json({
          clientId: CLIENT.clientId,
          clientSecret: secretBoxFor(deps.config).seal(CLIENT.clientSecret, id),
          scopes: ['openid', 'offline_access'],
          issuer: oidc.issuer,
        }),
        tenant_id: null,
      })
      .execute();
    const user = await createUser(deps, { email: 'oauth-invoker@example.com', roles: ['admin'] });
    const headers = authHeaders(await tokenFor(deps, user));
    const created = await request('/api/v1/admin/agents', headers, {
      method: 'POST',
      body: JSON.stringify({
        name: 'acme-bot',
        upstreamUrl: `${upstream.url}/run`,
        requiredCredentials: [{ serviceType: 'acme' }],
      }),
    });
    const { agent } = (await created.json()) as { agent: { id: string } };
    const invoke = () =>
      request(`/api/v1/agents/${agent.id}/invoke`, headers, {
        method: 'POST',
        body: JSON.stringify({ message: 'hi' }),
      });

    const before = await invoke();
    expect(before.status).toBe(401);
    const required = (await before.json()) as { code: string; authUrls: Record<string, string> };
    expect(required).toMatchObject({
      code: 'CREDENTIALS_REQUIRED',
      authUrls: { acme: `${PUBLIC}/api/v1/credentials/oauth/acme/auth` },
    });

    // The connect URL CREDENTIALS_REQUIRED handed out starts the flow.
    const { authUrl } = (await (await request(required.authUrls.acme!, headers)).json()) as { authUrl: string };
    const callback = await oidc.authorize(`${authUrl}&login_hint=alice`, CALLBACK);
    expect((await request(callback.href, headers)).status).toBe(200);

    expect((await invoke()).status).toBe(200);
    const first = upstream.requests.at(-1)?.headers['x-credential-acme'];
    expect(typeof first).toBe('string');
    expect(await oidc.provider.AccessToken.find(String(first))).toMatchObject({ accountId: 'alice' });

    clock.advance(600_000 - 30_000);
    const refreshes = () => oidc.tokenRequests.filter((t) => t === 'refresh_token').length;
    const refreshesBefore = refreshes();
    expect((await invoke()).status).toBe(200);
    const second = upstream.requests.at(-1)?.headers['x-credential-acme'];
    expect(second).not.toBe(first);
    expect(refreshes()).toBe(refreshesBefore + 1);
    expect((await invoke()).status).toBe(200);
    expect(upstream.requests.at(-1)?.headers['x-credential-acme']).toBe(second);
    expect(refreshes()).toBe(refreshesBefore + 1);

    await oidc.revokeAccount('alice');
    clock.advance(600_000 - 30_000);
    const afterRevoke = await invoke();
    expect(afterRevoke.status).toBe(401);
    expect(await afterRevoke.json()).toMatchObject({
      code: 'CREDENTIALS_REQUIRED',
      missing: ['acme'],
      authUrls: { acme: `${PUBLIC}/api/v1/credentials/oauth/acme/auth` },
    });
    const listed = (await (await request('/api/v1/credentials', headers)).json()) as {
      credentials: { serviceType: string; status: string }[];
    };
    expect(listed.credentials).toMatchObject([{ serviceType: 'acme', status: 'needs_reconnect' }]);
  });
});
