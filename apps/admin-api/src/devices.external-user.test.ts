import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps } from '@agentgw/service-kit/testing';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminApiService } from './service.js';
import { testClient } from './admin-api.fixtures.js';

const issuer = 'https://idp.example.test';
const secret = 'external-issuer-shared-secret-0123456789';
const audience = 'agentgw-tests';

describe.each(testBackends())('devices for a caller with no local account (%s)', (backend) => {
  let deps: TestDeps;
  let call: ReturnType<typeof testClient>;

  beforeAll(async () => {
    deps = await createTestDeps({
      backend,
      env: { JWT_EXTERNAL_ISSUERS: JSON.stringify([{ issuer, audience: 'agentgw', secret }]) },
    });
    call = testClient(await testHost(adminApiService, deps));
  });
  afterAll(() => deps?.close());

  it('answers 403 USER_NOT_REGISTERED instead of failing on the users foreign key', async () => {
    const token = await new SignJWT({ email: 'someone@idp.example.test' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setAudience('agentgw')
      .setSubject('ext-user-1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(secret));
    const res = await call('POST', '/api/v1/notifications/devices', {
      token,
      body: { platform: 'ios', pushToken: 'ext-token', deviceName: 'Phone' },
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'USER_NOT_REGISTERED' });
  });
});
