import { DOCS_PATH, OPENAPI_PATH } from '@agentgw/service-kit';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminApiService } from './service.js';

/** Every admin-api endpoint of the spec, in OpenAPI path syntax. */
const SPEC_ENDPOINTS = [
  'post /api/v1/auth/register',
  'post /api/v1/auth/login',
  'get /api/v1/admin/users',
  'post /api/v1/admin/users',
  'get /api/v1/admin/users/{id}',
  'put /api/v1/admin/users/{id}',
  'delete /api/v1/admin/users/{id}',
  'post /api/v1/admin/users/{id}/roles',
  'delete /api/v1/admin/users/{id}/roles/{role}',
  'post /api/v1/admin/agents',
  'get /api/v1/admin/agents',
  'get /api/v1/admin/agents/{id}',
  'put /api/v1/admin/agents/{id}',
  'delete /api/v1/admin/agents/{id}',
  'post /api/v1/admin/agents/{id}/disable',
  'post /api/v1/admin/agents/{id}/enable',
  'post /api/v1/admin/agents/{id}/regenerate-token',
  'get /api/v1/admin/api-keys',
  'post /api/v1/admin/api-keys',
  'delete /api/v1/admin/api-keys/{id}',
  'get /api/v1/admin/tool-providers',
  'post /api/v1/admin/tool-providers',
  'get /api/v1/admin/tool-providers/{id}',
  'put /api/v1/admin/tool-providers/{id}',
  'delete /api/v1/admin/tool-providers/{id}',
  'get /api/v1/admin/tool-providers/{id}/tools',
  'get /api/v1/admin/provider-access',
  'get /api/v1/admin/provider-access/by-provider/{providerId}',
  'get /api/v1/admin/provider-access/{id}',
  'post /api/v1/admin/provider-access',
  'put /api/v1/admin/provider-access/{id}',
  'delete /api/v1/admin/provider-access/{id}',
  'post /api/v1/admin/provider-access/evaluate',
  'get /api/v1/admin/provider-access/agent/{agentId}',
  'put /api/v1/admin/provider-access/agent/{agentId}',
  'get /api/v1/credential-providers',
  'post /api/v1/credential-providers',
  'get /api/v1/credential-providers/{id}',
  'put /api/v1/credential-providers/{id}',
  'delete /api/v1/credential-providers/{id}',
  'get /api/v1/credential-providers/by-service/{serviceType}',
  'post /api/v1/notifications/devices',
  'get /api/v1/notifications/devices',
  'delete /api/v1/notifications/devices/{id}',
];

type Operation = {
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
  parameters?: { name: string; in: string }[];
};
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, Record<string, string>>; schemas: Record<string, unknown> };
};

describe('OpenAPI document and docs page', () => {
  let deps: TestDeps;
  let app: TestHost['app'];
  let doc: Document;

  beforeAll(async () => {
    deps = await createTestDeps();
    ({ app } = await testHost(adminApiService, deps));
    const res = await app.request(OPENAPI_PATH);
    expect(res.status).toBe(200);
    doc = (await res.json()) as Document;
  });
  afterAll(() => deps?.close());

  const documented = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`));

  it('is OpenAPI 3.1 and documents every admin-api endpoint of the spec', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(documented()).toEqual(expect.arrayContaining(SPEC_ENDPOINTS));
  });

  // The host's probes and /metrics are operational endpoints, documented in service-kit's README, not API.
  it("documents the web console's cookie session: login's session field, logout and session", () => {
    expect(documented()).toEqual(expect.arrayContaining(['post /api/v1/auth/logout', 'get /api/v1/auth/session']));
    expect(JSON.stringify(doc.paths['/api/v1/auth/login'])).toContain('CSRF_REJECTED');
    expect(doc.components.schemas).toHaveProperty('LoginRequest.properties.session.enum', ['token', 'cookie']);
  });

  it('documents every route the app serves, and nothing it does not', () => {
    const served = app.routes
      .filter(
        (r) =>
          r.method !== 'ALL' &&
          ![OPENAPI_PATH, DOCS_PATH, '/health', '/health/live', '/health/ready', '/metrics'].includes(r.path) &&
          !r.path.startsWith(`${DOCS_PATH}/`), // the reference page's own files
      )
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(new Set(documented())).toEqual(new Set(served));
  });

  it('declares the bearer JWT and API key schemes that operations refer to', () => {
    expect(doc.components.securitySchemes).toMatchObject({
      bearerAuth: { type: 'http', scheme: 'bearer' },
      apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
    });
    const referenced = new Set(
      Object.values(doc.paths).flatMap((ops) =>
        Object.values(ops).flatMap((op) => (op.security ?? []).flatMap((s) => Object.keys(s))),
      ),
    );
    for (const name of referenced) expect(doc.components.securitySchemes, name).toHaveProperty(name);
    expect(doc.paths['/api/v1/admin/tool-providers']?.post?.security).toEqual([{ bearerAuth: [] }]);
  });

  it('describes bodies, path parameters and error responses from the route schemas', () => {
    const create = doc.paths['/api/v1/admin/tool-providers']!.post!;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403']));
    expect(doc.paths['/api/v1/admin/tool-providers/{id}/tools']!.get!.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path' }),
    ]);
    expect(doc.components.schemas).toHaveProperty('CreateToolProviderRequest');
    expect(doc.components.schemas).toHaveProperty('AccessRule');
    expect(doc.components.schemas).toHaveProperty('CreateCredentialProviderRequest');
  });

  it('serves the interactive reference pointing at the document', async () => {
    const res = await app.request(DOCS_PATH);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('openapi.json');
  });
});
