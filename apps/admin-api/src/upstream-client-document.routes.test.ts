import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { adminApiService } from './service.js';

// The gateway's client ID metadata document as admin-api serves it: public (no credentials), and
// only where an authorization server could fetch it.
describe('GET /oauth/upstream-client.json', () => {
  let deps: TestDeps | undefined;
  afterEach(() => deps?.close());

  const fetchDocument = async (env: Record<string, string>) => {
    deps = await createTestDeps({ env });
    const { app } = await testHost(adminApiService, deps);
    return app.request('/oauth/upstream-client.json');
  };

  it('answers the document without credentials, cacheable, its redirect URI the shared callback under OAUTH_CALLBACK_BASE_URL', async () => {
    const res = await fetchDocument({
      GATEWAY_PUBLIC_URL: 'https://gw.example',
      OAUTH_CALLBACK_BASE_URL: 'https://auth.gw.example/',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      client_id: 'https://gw.example/oauth/upstream-client.json',
      redirect_uris: ['https://auth.gw.example/api/v1/credentials/oauth/callback'],
      token_endpoint_auth_method: 'none',
    });
    expect(Object.keys(doc).filter((key) => /secret|key|jwks/i.test(key))).toEqual([]);
  });

  it('is 404 without a public URL an authorization server could fetch', async () => {
    // This route's own 404, in the authorization server's error shape as everything under /oauth/.
    const unset = await fetchDocument({});
    expect(unset.status).toBe(404);
    expect(await unset.json()).toEqual({
      error: 'invalid_request',
      error_description: expect.stringContaining('no client metadata document'),
    });
    await deps?.close();
    deps = undefined;
    const plainHttp = await fetchDocument({ GATEWAY_PUBLIC_URL: 'http://gw.example' });
    expect(plainHttp.status).toBe(404);
    expect(await plainHttp.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('no client metadata document'),
    });
  });
});
