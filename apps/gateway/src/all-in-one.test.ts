import { createLogger } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { createInvokeProxyService } from '@agentgw/invoke-proxy';
import { LaneRouter, type Host } from '@agentgw/service-kit';
import { createTestDeps, routeMatches, type TestDeps } from '@agentgw/service-kit/testing';
import { TrieRouter } from 'hono/router/trie-router';
import { authHeaders, createUser, startRecordingUpstream, tokenFor, type RecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost, gatewayServices } from './all-in-one.js';

const MiB = 1024 * 1024;

describe.each(testBackends())('the all-in-one host (%s)', (backend) => {
  let deps: TestDeps;
  let upstream: RecordingUpstream;
  let host: Host;
  let app: Host['app'];
  beforeAll(async () => {
    deps = await createTestDeps({ backend });
    upstream = await startRecordingUpstream();
    host = await createGatewayHost(deps);
    await host.start();
    app = host.app;
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await upstream?.close();
    await deps?.close();
  });

  it('adds the shell once: one tracing, metrics, request-id, access-log, security-header, body-limit and JSON-depth layer, and one /health', () => {
    const table = app.routes.map((r) => `${r.method} ${r.path}`);
    // Printed so the route table can be read in the test output.
    console.log(table.join('\n'));
    expect(app.routes.filter((r) => r.method === 'ALL' && r.path === '/*')).toHaveLength(6);
    expect(table.filter((r) => r.endsWith(' /health'))).toEqual(['GET /health']);
    for (const path of ['/health/live', '/health/ready', '/metrics'])
      expect(table.filter((r) => r.endsWith(` ${path}`))).toEqual([`GET ${path}`]);
    expect(gatewayServices.map((s) => s.name)).toEqual([
      'admin-api',
      'invoke-proxy',
      'vault',
      'mcp-gateway',
      'confirmation-hub',
      'audit-writer',
    ]);
  });

  it('routes its hot paths on lanes of their own with the very handlers one router over its whole table finds', async () => {
    const lanes = new LaneRouter<number>(gatewayServices.flatMap((s) => s.hotPaths ?? []));
    const reference = new TrieRouter<number>();
    app.routes.forEach(({ method, path }, i) => {
      lanes.add(method, path, i);
      reference.add(method, path, i);
    });
    // Every route's pattern made concrete (a parameter, a wildcard's tail), and the lanes' edges.
    const paths = app.routes.flatMap(({ path }) => {
      const concrete = path.replace(/:[A-Za-z]+/g, 'p-1');
      return concrete.endsWith('*') ? [concrete.slice(0, -1), `${concrete.slice(0, -1)}x/y`] : [concrete];
    });
    paths.push(
      '/api/v1/mcp/mcpx',
      '/api/v1/mcp-proxy',
      '/api/v1/mcp-proxyx/p/mcp',
      '/api/v1/agents',
      '/api/v1/agentsx/a/invoke',
    );
    for (const path of new Set(paths))
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'])
        expect(routeMatches(lanes, method, path), `${method} ${path}`).toEqual(routeMatches(reference, method, path));

    // The host's own router: the MCP and invoke paths on RegExpRouter, which the whole table is refused.
    expect(app.router).toBeInstanceOf(LaneRouter);
    const router = app.router as unknown as LaneRouter<unknown>;
    for (const path of [
      '/api/v1/mcp/mcp',
      '/api/v1/mcp-proxy/p-1/mcp',
      '/api/v1/agents/p-1/invoke',
      '/api/v1/admin/agents',
    ]) {
      await app.request(path, { method: 'POST' });
      expect(router.routerFor(path).name, path).toBe(
        path.startsWith('/api/v1/admin') ? 'SmartRouter + TrieRouter' : 'SmartRouter + RegExpRouter',
      );
    }
  });

  it('refuses an anonymous GET /metrics on its public listener without METRICS_TOKEN, and answers the token with it', async () => {
    const anonymous = await app.request('/metrics');
    expect(anonymous.status).toBe(404);
    expect(await anonymous.json()).toMatchObject({ code: 'NOT_FOUND' });
    // The loopback listener's app (METRICS_PORT) has the series, upstream origins included.
    expect(await (await host.metricsApp.request('/metrics')).text()).toContain('agentgw_http_requests_total');

    const token = 'metrics-token-0123456789';
    const guarded = await createGatewayHost({ ...deps, config: { ...deps.config, METRICS_TOKEN: token } });
    expect((await guarded.app.request('/metrics')).status).toBe(401);
    const scraped = await guarded.app.request('/metrics', { headers: { authorization: `Bearer ${token}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('agentgw_http_requests_total');
  });

  it('answers one /health for the whole process', async () => {
    const res = await app.request('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'ok',
      service: 'gateway',
      checks: { database: 'ok', redis: 'in-process' },
    });
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

  it('documents invoke, credentials and admin paths in one OpenAPI document', async () => {
    const doc = (await (await app.request('/api/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/agents/{agentId}/invoke',
        '/api/v1/agents/{agentId}/credentials-check',
        '/api/v1/agents/{agentId}',
        '/api/v1/credentials',
        '/api/v1/credentials/apikey',
        '/api/v1/credentials/check/{serviceType}',
        '/api/v1/admin/agents',
        '/api/v1/auth/login',
      ]),
    );
    expect(Object.keys(doc.paths['/api/v1/agents/{agentId}/invoke']!)).toEqual(['post']);
    const docs = await app.request('/api/v1/docs');
    expect(docs.status).toBe(200);
    // The reference loads Swagger UI from this gateway, under the console's policy: nothing from a CDN.
    expect(docs.headers.get('content-security-policy')).toContain("script-src 'self';");
    expect(await docs.text()).not.toMatch(/https?:\/\//);
    const bundle = await app.request('/api/v1/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });

  it('serves no /internal/* route on its public listener: 404 even with a valid vault service token', async () => {
    const doc = (await (await app.request('/api/v1/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/internal'))).toEqual([]);
    const user = await createUser(deps, { email: 'internal-probe@example.com', roles: ['admin'] });
    const serviceToken = await deps.auth.signServiceToken('invoke-proxy', 'vault');
    for (const [method, path] of [
      ['POST', '/internal/v1/credentials/resolve'],
      ['GET', '/internal/v1/credentials/resolve'],
      ['GET', '/internal'],
    ]) {
      const res = await app.request(path!, {
        method,
        headers: { 'x-service-token': serviceToken, 'content-type': 'application/json' },
        ...(method === 'POST' && { body: JSON.stringify({ userId: user.id, serviceTypes: ['crm'] }) }),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('lets invoke-proxy resolve credentials through the vault in-process', async () => {
    const user = await createUser(deps, { email: 'maker@example.com', roles: ['admin'] });
    const headers = authHeaders(await tokenFor(deps, user));
    const created = await app.request('/api/v1/admin/agents', {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: 'crm-bot',
        upstreamUrl: `${upstream.url}/run`,
        requiredCredentials: [{ serviceType: 'crm' }],
      }),
    });
    expect(created.status).toBe(201);
    const { agent } = (await created.json()) as { agent: { id: string } };

    const before = await app.request(`/api/v1/agents/${agent.id}/invoke`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ message: 'hi' }),
    });
    expect(before.status).toBe(401);
    expect(await before.json()).toMatchObject({ code: 'CREDENTIALS_REQUIRED', missing: ['crm'] });
    expect(upstream.requests).toHaveLength(0);

    const stored = await app.request('/api/v1/credentials/apikey', {
      method: 'POST',
      headers,
      body: JSON.stringify({ serviceType: 'crm', apiKey: 'crm-key-123' }),
    });
    expect(stored.status).toBe(201);

    const invoked = await app.request(`/api/v1/agents/${agent.id}/invoke`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ message: 'hi' }),
    });
    expect(invoked.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.headers['x-credential-crm']).toBe('crm-key-123');
    expect(upstream.requests[0]?.headers['x-user-id']).toBe(user.id);
  });

  it('writes one access-log line per request: a login, an agent created, a refused call and a 404, never a secret', async () => {
    const raw: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void raw.push(line) } });
    const logged = await createGatewayHost({ ...deps, logger });
    await logged.start();
    try {
      const admin = await createUser(deps, { email: 'logged@example.com', roles: ['admin'] });
      const login = await logged.app.request('/api/v1/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: admin.email, password: admin.password }),
      });
      expect(login.status).toBe(200);
      const { token } = (await login.json()) as { token: string };
      const created = await logged.app.request('/api/v1/admin/agents?secret=hidden-query-value', {
        method: 'POST',
        headers: authHeaders(token),
        body: JSON.stringify({ name: 'logged-bot', upstreamUrl: `${upstream.url}/run` }),
      });
      expect(created.status).toBe(201);
      const { agent } = (await created.json()) as { agent: { id: string } };
      expect(
        (
          await logged.app.request(`/api/v1/agents/${agent.id}/invoke`, {
            method: 'POST',
            headers: { 'x-api-key': 'agw_not-a-real-key-0123456789' },
          })
        ).status,
      ).toBe(401);
      expect((await logged.app.request('/api/v1/no-such-thing')).status).toBe(404);

      const lines = raw.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request');
      expect(lines.map((l) => `${String(l.method)} ${String(l.route)} ${String(l.status)}`)).toEqual([
        'POST /api/v1/auth/login 200',
        'POST /api/v1/admin/agents 201',
        // Refused by the auth layer: the pattern of the last handler that ran, as in the metrics.
        'POST /api/v1/agents/* 401',
        'GET unmatched 404',
      ]);
      expect(lines[1]).toMatchObject({
        path: '/api/v1/admin/agents',
        principal: 'user',
        principalId: admin.id,
        requestId: expect.any(String),
      });
      const written = raw.join('');
      for (const secret of [token, admin.password, 'hidden-query-value', 'agw_not-a-real-key-0123456789'])
        expect(written).not.toContain(secret);
    } finally {
      await logged.stop({ deadlineMs: 1_000 });
    }
  });

  it("passes a 1.5 MiB invoke body when invoke allows 2 MiB, while the host's 1 MiB default still caps admin routes", async () => {
    const services = gatewayServices.map((s) =>
      s.name === 'invoke-proxy' ? createInvokeProxyService({ maxRequestBytes: 2 * MiB }) : s,
    );
    const big = await createGatewayHost(deps, { services });
    await big.start();
    try {
      const user = await createUser(deps, { email: 'big-sender@example.com', roles: ['admin'] });
      const headers = authHeaders(await tokenFor(deps, user));
      const created = await big.app.request('/api/v1/admin/agents', {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'big-bot', upstreamUrl: `${upstream.url}/big` }),
      });
      expect(created.status).toBe(201);
      const { agent } = (await created.json()) as { agent: { id: string } };
      const message = 'x'.repeat(1.5 * MiB);

      const before = upstream.requests.length;
      const invoked = await big.app.request(`/api/v1/agents/${agent.id}/invoke`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message }),
      });
      expect(invoked.status).toBe(200);
      expect(upstream.requests).toHaveLength(before + 1);
      expect((upstream.requests.at(-1)?.body as { message: string }).message).toHaveLength(1.5 * MiB);

      const tooBig = await big.app.request(`/api/v1/agents/${agent.id}/invoke`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: 'x'.repeat(2 * MiB) }),
      });
      expect(tooBig.status).toBe(413);

      const admin = await big.app.request('/api/v1/admin/agents', {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'n', upstreamUrl: `${upstream.url}/x`, description: message }),
      });
      expect(admin.status).toBe(413);
      expect(await admin.json()).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'Request body too large' });
    } finally {
      await big.stop({ deadlineMs: 1_000 });
    }
  });
});
