import { newId } from '@agentgw/core';
import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, startMcpServer, tokenFor, type McpFixture } from '@agentgw/testkit';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CLIENT = { clientId: 'agentgw', clientSecret: 'exchangeClientSecret42' };

// Tool providers with authType token_exchange (issue 22, RFC 8693), in the all-in-one: the caller's
// own JWT is exchanged at a loopback token endpoint and only the exchanged token reaches the upstream.
describe('a tool provider reached by token exchange (all-in-one)', () => {
  let deps: TestDeps;
  let host: Host;
  let upstream: McpFixture;
  let tokenEndpoint: Server;
  let tokenUrl = '';
  const exchanges: { authorization: string | undefined; params: URLSearchParams }[] = [];
  let adminToken = '';
  let providerId = '';

  async function api(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const res = await host.app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
  }
  const whoami = (token: string) => api('POST', '/api/v1/mcp/mcp', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
  const allow = async (subjectType: 'user' | 'agent', subjectId: string) =>
    expect((await api('POST', '/api/v1/admin/provider-access', adminToken, { subjectType, subjectId, providerId, action: 'allow', toolPattern: '*' })).status).toBe(201);

  beforeAll(async () => {
    tokenEndpoint = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        exchanges.push({ authorization: req.headers.authorization, params: new URLSearchParams(body) });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: `exchanged-${exchanges.length}`, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: 3600 }));
      });
    });
    await new Promise<void>((resolve) => tokenEndpoint.listen(0, '127.0.0.1', resolve));
    tokenUrl = `http://127.0.0.1:${(tokenEndpoint.address() as AddressInfo).port}/token`;
    upstream = await startMcpServer({ tools: [{ name: 'whoami', handler: (_args, call) => `bearer ${call.headers.authorization ?? 'none'}` }] });
    deps = await createTestDeps({ env: { EGRESS_POLICY: 'allow-private' } });
    host = await createGatewayHost(deps);
    await host.start();
    adminToken = await tokenFor(deps, await createUser(deps, { email: `admin-${newId()}@example.com`, roles: ['admin'] }));
    const created = await api('POST', '/api/v1/admin/tool-providers', adminToken, {
      name: 'exchanged',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'token_exchange',
      tokenExchange: { tokenUrl, ...CLIENT, audience: 'tools-api', resource: upstream.url, scope: 'tools.read' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.provider).toMatchObject({
      authType: 'token_exchange',
      hasAuthSecret: true,
      tokenExchange: { tokenUrl, issuer: null, clientId: CLIENT.clientId, audience: 'tools-api', resource: upstream.url, scope: 'tools.read' },
    });
    expect(JSON.stringify(created.body)).not.toContain(CLIENT.clientSecret);
    providerId = created.body.provider.id as string;
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await upstream?.close();
    await new Promise((resolve) => tokenEndpoint?.close(resolve));
    await deps?.close();
  });

  it("exchanges the caller's JWT (RFC 8693 params) and sends only the exchanged token upstream; a second call reuses it", async () => {
    const alice = await createUser(deps, { email: `${newId()}@example.com`, roles: [] });
    const aliceToken = await tokenFor(deps, alice);
    await allow('user', alice.id);

    const first = await whoami(aliceToken);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.result.content[0].text).toBe('bearer Bearer exchanged-1');
    expect(exchanges).toHaveLength(1);
    const [exchange] = exchanges;
    expect(exchange?.authorization).toBe(`Basic ${Buffer.from(`${CLIENT.clientId}:${CLIENT.clientSecret}`).toString('base64')}`);
    expect(Object.fromEntries(exchange?.params ?? [])).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: aliceToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      audience: 'tools-api',
      resource: upstream.url,
      scope: 'tools.read',
    });

    const second = await whoami(aliceToken);
    expect(second.body.result.content[0].text).toBe('bearer Bearer exchanged-1');
    expect(exchanges).toHaveLength(1);
    expect(JSON.stringify(upstream.requests.map((r) => r.headers))).not.toContain(aliceToken);
  });

  it('refuses an agent runtime token with the reason, audited as rejected, without exchanging', async () => {
    const created = await api('POST', '/api/v1/admin/agents', adminToken, { name: `bot-${newId().slice(0, 8)}`, upstreamUrl: upstream.url });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { agent, runtime_token: runtimeToken } = created.body as { agent: { id: string }; runtime_token: string };
    expect(runtimeToken.startsWith('art_')).toBe(true);
    await allow('agent', agent.id);
    const before = exchanges.length;
    const upstreamCalls = upstream.calls.length;

    const refused = await whoami(runtimeToken);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: -32003, data: { code: 'SIGN_IN_TOKEN_REQUIRED', reason: expect.stringContaining('runtime token') } });
    expect(exchanges).toHaveLength(before);
    expect(upstream.calls).toHaveLength(upstreamCalls);
    const auditId = refused.body.error.data.auditId as string;
    await expect
      .poll(async () => deps.db.selectFrom('audit_logs').select(['status', 'error']).where('id', '=', auditId).executeTakeFirst())
      .toMatchObject({
        status: 'rejected',
        error: expect.stringContaining('sign-in token'),
      });
  });
});
