import { secretBoxFor } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import { json } from '@agentgw/db';
import { testBackends } from '@agentgw/db/testing';
import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, startOidcServer, startProtectedMcpServer, tokenFor, type OidcServer, type ProtectedMcpServer } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayHost } from './all-in-one.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PUBLIC = 'http://gateway.test';
const RESOURCE = 'https://tools.acme.test/mcp';
const CLIENT = { clientId: 'agentgw', clientSecret: 'client-secret-of-the-gateway' };
const SERVICE = 'acme_tools';
const CALLBACK = `${PUBLIC}/api/v1/credentials/oauth/${SERVICE}/callback`;
const CONNECT_URL = `${PUBLIC}/api/v1/credentials/oauth/${SERVICE}/auth`;
/** Each account sees its own tools beside whoami at the upstream. */
const TOOLS_OF: Record<string, string[]> = { alice: ['alice_notes'], bob: ['bob_calendar', 'bob_mail'], carol: ['carol_files'] };

// Issue 22: the tool lists of an upstream protected per the MCP authorization spec (every request,
// initialize and tools/list too, needs the user's token; each user may see other tools). The
// gateway lists it as each user, so two users get their own lists through both endpoints; one
// who has not connected sees it named as left out with the connect URL, and after connecting, the tools.
describe.each(testBackends())('per-user tool lists of a protected MCP upstream (all-in-one, %s)', (backend) => {
  let deps: TestDeps;
  let host: Host;
  let oidc: OidcServer;
  let upstream: ProtectedMcpServer;
  let adminToken = '';
  let providerId = '';

  async function api(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const url = path.startsWith('http') ? new URL(path) : null;
    const res = await host.app.request(url ? url.pathname + url.search : path, {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
  }

  const rpc = (path: string, token: string, method: string, params: Json = {}) => api('POST', path, token, { jsonrpc: '2.0', id: 1, method, params });
  const unified = (token: string, method: string, params?: Json) => rpc('/api/v1/mcp/mcp', token, method, params);
  const proxied = (token: string, method: string, params?: Json) => rpc(`/api/v1/mcp-proxy/${providerId}/mcp`, token, method, params);
  const names = (res: { body: Json }) => (res.body.result.tools as Json[]).map((tool) => tool.name as string).sort();

  /** A user allowed to use the provider's tools. */
  async function user(): Promise<string> {
    const created = await createUser(deps, { email: `${newId()}@example.com`, roles: [] });
    const token = await tokenFor(deps, created);
    const rule = await api('POST', '/api/v1/admin/provider-access', adminToken, { subjectType: 'user', subjectId: created.id, providerId, action: 'allow', toolPattern: '*' });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    return token;
  }

  /** The user connects their upstream account (the OpenID provider's login as `account`). */
  async function connect(token: string, account: string): Promise<void> {
    const { authUrl } = (await api('GET', `/api/v1/credentials/oauth/${SERVICE}/auth`, token)).body as { authUrl: string };
    const callback = await oidc.authorize(`${authUrl}&login_hint=${account}`, CALLBACK);
    expect((await api('GET', callback.href, token)).status).toBe(200);
  }

  beforeAll(async () => {
    oidc = await startOidcServer({ clients: [{ ...CLIENT, redirectUris: [CALLBACK] }], resource: RESOURCE });
    upstream = await startProtectedMcpServer({ issuer: oidc.issuer, jwksUri: oidc.jwksUri, resource: RESOURCE, toolsOf: (subject) => TOOLS_OF[subject] ?? [] });
    deps = await createTestDeps({ backend, env: { GATEWAY_PUBLIC_URL: PUBLIC, EGRESS_POLICY: 'allow-private' } });
    host = await createGatewayHost(deps);
    await host.start();
    adminToken = await tokenFor(deps, await createUser(deps, { email: `admin-${newId()}@example.com`, roles: ['admin'] }));
    const id = newId();
    await deps.db
      .insertInto('credential_providers')
      .values({
        id,
        name: 'Acme tools',
        service_type: SERVICE,
        auth_type: 'oauth2',
        description: null,
        config: json({ ...CLIENT, clientSecret: secretBoxFor(deps.config).seal(CLIENT.clientSecret, id), scopes: ['openid', 'offline_access'], issuer: oidc.issuer, resource: RESOURCE }),
        tenant_id: null,
      })
      .execute();
    const created = await api('POST', '/api/v1/admin/tool-providers', adminToken, { name: 'acme', pattern: '*', endpoint: upstream.url, authType: 'user_oauth', credentialServiceType: SERVICE });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    providerId = created.body.provider.id as string;
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await upstream?.close();
    await oidc?.close();
    await deps?.close();
  });

  it('refuses every tokenless request, initialize and tools/list included (the fixture is protected as the spec has it)', async () => {
    for (const method of ['initialize', 'tools/list']) {
      const res = await fetch(upstream.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      });
      expect(res.status, method).toBe(401);
      await res.body?.cancel();
    }
  });

  it("lists each user's own tools through the unified endpoint and the proxy, and calls them as that user", async () => {
    const [alice, bob] = [await user(), await user()];
    await connect(alice, 'alice');
    await connect(bob, 'bob');

    const a = await unified(alice, 'tools/list');
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(names(a)).toEqual(['alice_notes', 'whoami']);
    expect(a.body.result._meta).toBeUndefined();
    expect(names(await unified(bob, 'tools/list'))).toEqual(['bob_calendar', 'bob_mail', 'whoami']);
    expect(names(await proxied(alice, 'tools/list'))).toEqual(['alice_notes', 'whoami']);
    expect(names(await proxied(bob, 'tools/list'))).toEqual(['bob_calendar', 'bob_mail', 'whoami']);

    const notes = await unified(alice, 'tools/call', { name: 'alice_notes', arguments: {} });
    expect(notes.status, JSON.stringify(notes.body)).toBe(200);
    expect(notes.body.result.content[0].text).toBe('alice_notes for alice');
    expect((await proxied(bob, 'tools/call', { name: 'bob_mail', arguments: {} })).body.result.content[0].text).toBe('bob_mail for bob');
    // A tool only another user's list has is not theirs to call: unknown, never sent upstream.
    const foreign = await unified(bob, 'tools/call', { name: 'alice_notes', arguments: {} });
    expect(foreign.body.error).toMatchObject({ code: -32602, message: 'Unknown tool: alice_notes' });
    expect((await proxied(bob, 'tools/call', { name: 'alice_notes', arguments: {} })).body.error).toMatchObject({ code: -32602 });
    expect(upstream.identities).toEqual(['alice', 'bob']);
  });

  it('names the provider left out with the connect URL for a user who has not connected, refuses their calls with it, and lists the tools once they connect', async () => {
    const carol = await user();
    const before = upstream.identities.length;

    const listed = await unified(carol, 'tools/list');
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.result.tools).toEqual([]);
    expect(listed.body.result._meta['agentgw/leftOut']).toEqual([{ providerId, name: 'acme', reason: expect.stringContaining(`Connect ${SERVICE} first`), authUrl: CONNECT_URL }]);
    const viaProxy = await proxied(carol, 'tools/list');
    expect(viaProxy.status).toBe(200);
    expect(viaProxy.body.result).toMatchObject({ tools: [], _meta: { 'agentgw/leftOut': [{ providerId, authUrl: CONNECT_URL }] } });

    // Any name the provider's pattern claims: the same refusal a call answers, never 502, audited as refused.
    for (const [name, call] of [
      ['whoami', unified],
      ['carol_files', unified],
      ['whoami', proxied],
    ] as const) {
      const res = await call(carol, 'tools/call', { name, arguments: {} });
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(403);
      expect(res.body.error).toMatchObject({ code: -32003, data: { code: 'CREDENTIALS_REQUIRED', missing: [SERVICE], authUrl: CONNECT_URL, providerId } });
      expect(await waitForAudit(res.body.error.data.auditId as string)).toMatchObject({ status: 'rejected', tool_name: name, error: expect.stringContaining(`Connect ${SERVICE} first`) });
    }
    expect(upstream.identities).toHaveLength(before);

    // Connecting publishes credential.changed: the next list is asked for with the new token at once.
    await connect(carol, 'carol');
    expect(names(await unified(carol, 'tools/list'))).toEqual(['carol_files', 'whoami']);
    expect(names(await proxied(carol, 'tools/list'))).toEqual(['carol_files', 'whoami']);
    expect((await unified(carol, 'tools/call', { name: 'carol_files', arguments: {} })).body.result.content[0].text).toBe('carol_files for carol');
  });

  it('asks a client that declared URL-mode elicitation to open the connect URL when it calls before connecting', async () => {
    const dave = await user();
    const post = (body: unknown, session?: string) =>
      host.app.request('/api/v1/mcp/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${dave}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': '2025-11-25',
          ...(session ? { 'mcp-session-id': session } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { url: {} } }, clientInfo: { name: 't', version: '1' } },
    });
    const session = init.headers.get('mcp-session-id') ?? '';
    expect(session).not.toBe('');
    const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, session);
    expect(((await res.json()) as Json).error).toMatchObject({ code: -32042, data: { elicitations: [{ mode: 'url', url: CONNECT_URL }], code: 'CREDENTIALS_REQUIRED' } });
  });

  async function waitForAudit(id: string): Promise<Json | undefined> {
    for (let i = 0; i < 100; i++) {
      const row = await deps.db.selectFrom('audit_logs').selectAll().where('id', '=', id).executeTakeFirst();
      if (row) return row;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return undefined;
  }
});
