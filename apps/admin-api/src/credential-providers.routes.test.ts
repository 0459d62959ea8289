import { secretBoxFor } from '@agentgw/auth';
import { testBackends } from '@agentgw/db/testing';
import type { TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApiUnderTest, type Call, type Caller } from './admin-api.fixtures.js';

const BASE = '/api/v1/credential-providers';
const MASK = '********';

describe.each(testBackends())('credential providers API (%s)', (backend) => {
  let deps: TestDeps;
  let call: Call;
  let admin: Caller;
  let acmeAdmin: Caller;
  let globexAdmin: Caller;
  let acmeCreator: Caller;

  beforeAll(async () => {
    ({ deps, call, admin, acmeAdmin, globexAdmin, acmeCreator } = await startAdminApiUnderTest(backend));
  });
  afterAll(() => deps?.close());

  const create = (caller: Caller, body: Record<string, unknown>) => call('POST', BASE, { token: caller.token, body });
  const storedConfig = async (id: string) =>
    (await deps.db.selectFrom('credential_providers').select('config').where('id', '=', id).executeTakeFirstOrThrow())
      .config;
  const oauth = (serviceType: string) => ({
    name: 'GitHub',
    serviceType,
    authType: 'oauth2',
    config: {
      clientId: 'client-1',
      clientSecret: 'oauth-client-secret',
      scopes: ['repo'],
      tokenUrl: 'https://github.com/login/oauth/access_token',
    },
  });

  it('creates an oauth2 provider: secrets masked on read, sealed at rest', async () => {
    const res = await create(admin, oauth('github'));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      provider: {
        id: expect.any(String),
        name: 'GitHub',
        serviceType: 'github',
        authType: 'oauth2',
        description: null,
        config: {
          clientId: 'client-1',
          clientSecret: MASK,
          scopes: ['repo'],
          tokenUrl: 'https://github.com/login/oauth/access_token',
        },
        tenantId: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    const id = res.body.provider.id;
    const stored = await storedConfig(id);
    expect(JSON.stringify(stored)).not.toContain('oauth-client-secret');
    expect(secretBoxFor(deps.config).open(stored.clientSecret as string, id)).toBe('oauth-client-secret');

    for (const path of [BASE, `${BASE}/${id}`, `${BASE}/by-service/github`]) {
      const read = await call('GET', path, { token: admin.token });
      expect(read.status, path).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain('oauth-client-secret');
    }
  });

  it('masks any secret-, password-, token- or key-named key, keeps URLs in clear', async () => {
    const res = await create(admin, {
      name: 'Jira',
      serviceType: 'jira',
      authType: 'basic',
      config: {
        connectUrl: 'https://connect.example.test/jira',
        tokenUrl: 'https://connect.example.test/token',
        adminPassword: 'pw-1',
        serviceApiKey: 'ak-1',
        accessToken: 'at-1',
        nested: { signingSecret: 's-1', privateKey: 'pk-1', note: 'n' },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.provider.config).toEqual({
      connectUrl: 'https://connect.example.test/jira',
      tokenUrl: 'https://connect.example.test/token',
      adminPassword: MASK,
      serviceApiKey: MASK,
      accessToken: MASK,
      nested: { signingSecret: MASK, privateKey: MASK, note: 'n' },
    });
    const stored = await storedConfig(res.body.provider.id);
    expect(stored.connectUrl).toBe('https://connect.example.test/jira');
    expect(JSON.stringify(stored)).not.toMatch(/pw-1|s-1|ak-1|at-1|pk-1/);
  });

  it('keeps the authorization server settings of an oauth2 provider (issuer, revocation, extra parameters, resource) in clear', async () => {
    const config = {
      clientId: 'client-1',
      clientSecret: 'oauth-client-secret',
      scopes: ['openid'],
      issuer: 'https://as.example',
      revocationUrl: 'https://as.example/revoke',
      clientAuthMethod: 'client_secret_post',
      authorizationParams: { prompt: 'consent', access_type: 'offline' },
      resource: 'https://api.example',
    };
    const res = await create(admin, { name: 'AS', serviceType: 'as_settings', authType: 'oauth2', config });
    expect(res.status).toBe(201);
    expect((res.body.provider as { config: unknown }).config).toEqual({ ...config, clientSecret: MASK });
  });

  it('accepts jwt and api_key configs, config being optional for them', async () => {
    const jwt = await create(admin, {
      name: 'Linear',
      serviceType: 'linear',
      authType: 'jwt',
      config: {
        connectUrl: 'https://connect.example.test/linear',
        jwt: { headerName: 'Authorization', prefix: 'Bearer ' },
      },
    });
    expect(jwt.status).toBe(201);
    expect(jwt.body.provider.config).toEqual({
      connectUrl: 'https://connect.example.test/linear',
      jwt: { headerName: 'Authorization', prefix: 'Bearer ' },
    });
    const apiKey = await create(admin, {
      name: 'OpenAI',
      serviceType: 'openai',
      authType: 'api_key',
      description: 'keys',
    });
    expect(apiKey.status).toBe(201);
    expect(apiKey.body.provider).toMatchObject({ config: {}, description: 'keys' });
  });

  it('answers 400 naming the field', async () => {
    const malformed = await call('POST', BASE, { token: admin.token, rawBody: 'not json' });
    expect(malformed.status).toBe(400);

    const cases: [Record<string, unknown>, string][] = [
      [{ ...oauth('x'), serviceType: 'GitHub' }, 'serviceType'],
      [{ ...oauth('x'), serviceType: '1password' }, 'serviceType'],
      [{ ...oauth('x'), serviceType: 7 }, 'serviceType'],
      [{ ...oauth('x'), name: undefined }, 'name'],
      [{ ...oauth('x'), authType: 'saml' }, 'authType'],
      [{ ...oauth('x'), config: undefined }, 'config'],
      [{ ...oauth('x'), config: { clientSecret: 's', scopes: [] } }, 'config.clientId'],
      [{ ...oauth('x'), config: { clientId: 'c', clientSecret: 's', scopes: 'repo' } }, 'config.scopes'],
      [{ ...oauth('x'), config: { clientId: 'c', clientSecret: MASK } }, 'config.clientSecret'],
      [{ ...oauth('x'), config: { clientId: 'c', clientSecret: 's', issuer: 'ftp://as.example' } }, 'config.issuer'],
      [{ ...oauth('x'), config: { clientId: 'c', clientSecret: 's', resource: 'not a url' } }, 'config.resource'],
      [
        { ...oauth('x'), config: { clientId: 'c', clientSecret: 's', authorizationParams: { prompt: 7 } } },
        'config.authorizationParams.prompt',
      ],
      [
        { ...oauth('x'), config: { clientId: 'c', clientSecret: 's', clientAuthMethod: 'private_key_jwt' } },
        'config.clientAuthMethod',
      ],
      [
        { name: 'J', serviceType: 'j', authType: 'jwt', config: { jwt: { prefix: 'Bearer ' } } },
        'config.jwt.headerName',
      ],
      [
        { name: 'J', serviceType: 'j', authType: 'api_key', config: { connectUrl: 'javascript:alert(1)' } },
        'config.connectUrl',
      ],
      [{ name: 'J', serviceType: 'j', authType: 'basic', config: { password: 12 } }, 'config.password'],
    ];
    for (const [body, field] of cases) {
      const res = await create(admin, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
  });

  it('allows one provider per service type in each tenant (409 on a duplicate)', async () => {
    expect((await create(admin, oauth('dup'))).status).toBe(201);
    const duplicate = await create(admin, oauth('dup'));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.code).toBe('SERVICE_TYPE_TAKEN');
    expect((await create(acmeAdmin, oauth('dup'))).status).toBe(201);
    expect((await create(acmeAdmin, oauth('dup'))).status).toBe(409);
    expect((await create(globexAdmin, oauth('dup'))).status).toBe(201);

    const other = (await create(admin, oauth('dup_other'))).body.provider;
    const renamed = await call('PUT', `${BASE}/${other.id}`, { token: admin.token, body: { serviceType: 'dup' } });
    expect(renamed.status).toBe(409);
  });

  it('updates: a masked secret keeps the stored value, a new one replaces it', async () => {
    const created = (await create(admin, oauth('keep'))).body.provider;
    const sealedBefore = (await storedConfig(created.id)).clientSecret;

    const kept = await call('PUT', `${BASE}/${created.id}`, {
      token: admin.token,
      body: { name: 'GitHub Enterprise', config: { ...created.config, clientId: 'client-2' } },
    });
    expect(kept.status).toBe(200);
    expect(kept.body).toEqual({
      success: true,
      provider: {
        ...created,
        name: 'GitHub Enterprise',
        config: { ...created.config, clientId: 'client-2' },
        updatedAt: expect.any(String),
      },
    });
    expect((await storedConfig(created.id)).clientSecret).toBe(sealedBefore);

    await call('PUT', `${BASE}/${created.id}`, {
      token: admin.token,
      body: { config: { ...created.config, clientSecret: 'rotated-secret' } },
    });
    const rotated = (await storedConfig(created.id)).clientSecret as string;
    expect(rotated).not.toBe(sealedBefore);
    expect(secretBoxFor(deps.config).open(rotated, created.id)).toBe('rotated-secret');

    const invalid = await call('PUT', `${BASE}/${created.id}`, {
      token: admin.token,
      body: { config: { clientSecret: MASK } },
    });
    expect(invalid.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'config.clientId' });
    const switched = await call('PUT', `${BASE}/${created.id}`, {
      token: admin.token,
      body: { authType: 'api_key', config: {} },
    });
    expect(switched.body.provider).toMatchObject({ authType: 'api_key', config: {} });
    const back = await call('PUT', `${BASE}/${created.id}`, { token: admin.token, body: { authType: 'oauth2' } });
    expect(back.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'config.clientId' });
  });

  it('resolves by service type: own tenant first, then global, else 404', async () => {
    const global = (await create(admin, oauth('resolver'))).body.provider;
    const acme = (await create(acmeAdmin, oauth('resolver'))).body.provider;
    const resolve = (caller: Caller, serviceType: string) =>
      call('GET', `${BASE}/by-service/${serviceType}`, { token: caller.token });

    expect((await resolve(acmeCreator, 'resolver')).body.provider.id).toBe(acme.id);
    expect((await resolve(globexAdmin, 'resolver')).body.provider.id).toBe(global.id);
    expect((await resolve(admin, 'resolver')).body.provider.id).toBe(global.id);
    expect((await resolve(acmeCreator, 'nothing_here')).status).toBe(404);
  });

  it('answers 404 for unknown ids and enforces permissions and tenancy', async () => {
    for (const [method, body] of [['GET'], ['PUT', { name: 'n' }], ['DELETE']] as const) {
      expect((await call(method, `${BASE}/nope`, { token: admin.token, body })).status, method).toBe(404);
    }
    expect((await call('GET', BASE)).status).toBe(401);
    expect((await call('GET', BASE, { token: acmeCreator.token })).status).toBe(200);
    expect((await create(acmeCreator, oauth('creator_made'))).status).toBe(403);

    const acme = (await create(acmeAdmin, oauth('acme_private'))).body.provider;
    expect(acme.tenantId).toBe('acme');
    expect((await call('GET', `${BASE}/${acme.id}`, { token: globexAdmin.token })).status).toBe(404);
    expect((await call('DELETE', `${BASE}/${acme.id}`, { token: globexAdmin.token })).status).toBe(404);
    expect((await call('GET', `${BASE}/by-service/acme_private`, { token: globexAdmin.token })).status).toBe(404);
    const globexList = await call('GET', BASE, { token: globexAdmin.token });
    expect(globexList.body.providers.map((p: { id: string }) => p.id)).not.toContain(acme.id);

    const global = (await create(admin, oauth('global_only'))).body.provider;
    expect((await call('PUT', `${BASE}/${global.id}`, { token: acmeAdmin.token, body: { name: 'mine' } })).status).toBe(
      403,
    );
    expect((await create(acmeAdmin, { ...oauth('elsewhere'), tenantId: 'globex' })).status).toBe(403);

    expect(await call('DELETE', `${BASE}/${acme.id}`, { token: acmeAdmin.token })).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect((await call('GET', `${BASE}/${acme.id}`, { token: acmeAdmin.token })).status).toBe(404);
  });
});
