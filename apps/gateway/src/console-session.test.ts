import { testBackends } from '@agentgw/db/testing';
import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, type TestUser } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';

// The console's cookie session across every service of the all-in-one: accepted wherever a user
// JWT is, CSRF-checked on writes, and never taken by the endpoints meant for runtimes.
describe.each(testBackends())('the console cookie on the all-in-one (%s)', (backend) => {
  let deps: TestDeps;
  let host: Host;
  let user: TestUser;
  let cookie = '';
  const sameOrigin = { 'sec-fetch-site': 'same-origin' };

  const request = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
    host.app.request(path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    deps = await createTestDeps({ backend });
    host = await createGatewayHost(deps);
    await host.start();
    user = await createUser(deps, { email: `console-${Date.now()}@example.test`, roles: ['admin'] });
    const login = await request('POST', '/api/v1/auth/login', sameOrigin, {
      email: user.email,
      password: user.password,
      session: 'cookie',
    });
    expect(login.status).toBe(200);
    expect(await login.json()).not.toHaveProperty('token');
    cookie = login.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    expect(cookie).toMatch(/^agentgw_session=ey/);
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await deps?.close();
  });

  it('authenticates reads of every user-facing service, the SSE stream included', async () => {
    for (const path of [
      '/api/v1/auth/session',
      '/api/v1/credentials',
      '/api/v1/audit/logs?limit=1',
      '/api/v1/stream/pending',
      '/api/v1/admin/users',
    ]) {
      const res = await request('GET', path, { cookie });
      expect(res.status, path).toBe(200);
    }
    // EventSource sends the cookie by itself: the stream opens with it alone.
    const abort = new AbortController();
    const stream = await host.app.request('/api/v1/stream', {
      headers: { cookie, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    abort.abort();
    await stream.body?.cancel().catch(() => undefined);
  });

  it('refuses a write without the same-origin proof or from another origin, and lets the console write', async () => {
    const device = (n: number) => ({ platform: 'android', pushToken: `console-push-${n}-${Date.now()}` });
    for (const headers of [{}, { origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }] as Record<
      string,
      string
    >[]) {
      const res = await request('POST', '/api/v1/notifications/devices', { cookie, ...headers }, device(1));
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'CSRF_REJECTED' });
    }
    expect((await request('POST', '/api/v1/notifications/devices', { cookie, ...sameOrigin }, device(2))).status).toBe(
      201,
    );
  });

  it('is never accepted by the MCP endpoints or the tool gate, which are for runtimes', async () => {
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const mcpHeaders = { cookie, ...sameOrigin, accept: 'application/json, text/event-stream' };
    for (const [path, body] of [
      ['/api/v1/mcp/mcp', rpc],
      ['/api/v1/mcp-proxy/00000000-0000-4000-8000-000000000000/mcp', rpc],
      ['/api/v1/tool-gate/evaluate', { toolName: 'x', providerId: 'p', arguments: {} }],
      ['/api/v1/tool-gate/audit', { toolName: 'x', providerId: 'p', success: true }],
    ] as const) {
      const res = await request('POST', path, mcpHeaders, body);
      expect(res.status, path).toBe(401);
      // The same JWT as a bearer gets past authentication there: only the cookie form is refused.
      const bearer = await request(
        'POST',
        path,
        { ...mcpHeaders, authorization: `Bearer ${cookie.split('=')[1]}` },
        body,
      );
      expect(bearer.status, path).not.toBe(401);
    }
  });

  it('logout expires the cookie', async () => {
    const res = await request('POST', '/api/v1/auth/logout', { cookie, ...sameOrigin });
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^agentgw_session=;.*Max-Age=0/)]),
    );
  });
});
