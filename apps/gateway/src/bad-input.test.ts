import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { authHeaders, createUser, tokenFor } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';

// Every route of the all-in-one, hit with malformed bodies, odd ids, bad query values and
// each kind of (in)valid credential: a production gateway answers all of it with 4xx and the
// one error body, never a 5xx.
const EXTRA_ROUTES: [string, string][] = [
  ['POST', '/api/v1/agents/{id}/invoke'],
  ['GET', '/api/v1/agents/{id}/credentials-check'],
  ['GET', '/api/v1/agents/{id}'],
  ['GET', '/api/v1/credentials'],
  ['DELETE', '/api/v1/credentials/{id}'],
  ['POST', '/api/v1/credentials/jwt'],
  ['POST', '/api/v1/credentials/apikey'],
  ['POST', '/api/v1/credentials/resolve'],
  ['GET', '/api/v1/credentials/check/{id}'],
  ['POST', '/internal/v1/credentials/resolve'],
];
const BODIES = [
  '[]',
  'null',
  '{bad',
  '{"name":123,"email":[],"password":{},"upstreamUrl":"x","serviceTypes":"a","rules":"x","platform":1,"message":5}',
  '{"rules":[{}],"serviceTypes":[1]}',
  // Valid shapes carrying NUL characters, which PostgreSQL cannot store in text or jsonb.
  JSON.stringify({
    name: 'n\u0000',
    email: 'nul@example.com',
    password: 'password\u0000',
    upstreamUrl: 'http://nul.example.test',
    description: '\u0000',
    requiredCredentials: [{ serviceType: 'abc', description: '\u0000' }],
    platform: 'ios',
    pushToken: 'p\u0000',
    deviceName: '\u0000',
    serviceType: 'abc',
    apiKey: 'k\u0000',
    token: 't\u0000',
    expiresAt: '2099-01-01T00:00:00Z',
    pattern: '*',
    endpoint: 'http://nul.example.test',
    authType: 'none',
    message: 'm\u0000',
  }),
];
const IDS = ['nope', "'; drop table users;--", 'a'.repeat(2000)];
const QUERIES = ['', '?limit=abc&offset=-1&status=zzz&subjectType=1'];

const MCP_ROUTE = /^\/api\/v1\/(mcp\/mcp|mcp-proxy\/[^/]+\/mcp)(\?|$)/;
type Body = {
  code?: unknown;
  message?: unknown;
  jsonrpc?: unknown;
  error?: { code?: unknown; message?: unknown } | string;
  error_description?: unknown;
} | null;
const isErrorBody = (b: Body) => typeof b?.code === 'string' && typeof b.message === 'string';
const isRpcError = (b: Body) =>
  b?.jsonrpc === '2.0' &&
  typeof b.error === 'object' &&
  typeof b.error.code === 'number' &&
  typeof b.error.message === 'string';
/** The authorization server's own endpoints answer errors in RFC 6749's shape (`error`, `error_description`), as OAuth clients expect. */
const OAUTH_ROUTE = /^\/(oauth\/|\.well-known\/(oauth-authorization-server|openid-configuration))/;
const isOAuthError = (b: Body) =>
  typeof b?.error === 'string' && (b.error_description === undefined || typeof b.error_description === 'string');

/**
 * The one error body everywhere; on the MCP endpoints a message the transport accepted is
 * answered as JSON-RPC 2.0 (spec: MCP endpoints), so there a JSON-RPC error object is right too;
 * the OAuth authorization server's endpoints answer RFC 6749 errors.
 */
const errorShapeFor = (path: string) =>
  OAUTH_ROUTE.test(path)
    ? expect.toSatisfy(isOAuthError, 'an RFC 6749 error')
    : expect.toSatisfy(
        (b: Body) => isErrorBody(b) || (MCP_ROUTE.test(path) && isRpcError(b)),
        MCP_ROUTE.test(path) ? 'the error body or a JSON-RPC error' : 'the error body',
      );

describe('bad input never yields a 5xx', () => {
  let deps: TestDeps;
  let app: Host['app'];
  let credentials: Record<string, string>[];

  beforeAll(async () => {
    deps = await createTestDeps();
    ({ app } = await createGatewayHost(deps));
    const admin = await createUser(deps, { email: 'fuzz-admin@example.com', roles: ['admin'] });
    credentials = [
      authHeaders(await tokenFor(deps, admin)),
      {},
      { 'x-api-key': 'gk_unknown', 'x-user-id': admin.id },
      { authorization: 'Bearer art_unknown' },
    ];
  });
  afterAll(() => deps?.close());

  it('over every documented and undocumented route', async () => {
    const doc = (await (await app.request('/api/v1/openapi.json')).json()) as { paths: Record<string, object> };
    const routes = [...EXTRA_ROUTES];
    for (const [path, ops] of Object.entries(doc.paths))
      for (const method of Object.keys(ops)) routes.push([method.toUpperCase(), path]);
    expect(routes.length).toBeGreaterThan(40);

    const failures: string[] = [];
    for (const [method, template] of routes) {
      const bodies = method === 'GET' || method === 'DELETE' ? [undefined] : BODIES;
      for (const id of IDS)
        for (const query of QUERIES)
          for (const body of bodies)
            for (const headers of credentials) {
              const path = template.replace(/\{[^}]+\}/g, encodeURIComponent(id)) + query;
              const res = await app.request(path, {
                method,
                headers: { 'content-type': 'application/json', ...headers },
                body,
              });
              // 501 NOT_IMPLEMENTED is the deliberate answer of the OAuth connection routes (documented, so fuzzed too).
              if (res.status >= 500 && res.status !== 501)
                failures.push(`${res.status} ${method} ${path.slice(0, 80)} ${String(body).slice(0, 40)}`);
              else if (res.status >= 400) expect(await res.json()).toMatchObject(errorShapeFor(path));
            }
    }
    expect(failures).toEqual([]);
  });
});
