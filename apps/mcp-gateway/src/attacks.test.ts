import { request as httpRequest } from 'node:http';
import type { Principal } from '@agentgw/auth';
import { createUser, startMcpServer, tokenFor, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

// An attacker's view of mcp-gateway: every input hostile, every tenant boundary probed from the
// other side. Tenant A owns a provider and an agent; tenant B (an agent, a user) and a tenant-less
// self-registered user try to reach them.

let gw: GatewayUnderTest;
let upstreamA: McpFixture;
let upstreamB: McpFixture;
let a: { provider: string; agent: string; token: string };
let b: { provider: string; agent: string; token: string };
let userB: string;
let loner: string;

const SESSION_VERSION = '2025-11-25';
const MODERN = '2026-07-28';
const modernMeta = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};

async function as(deps: GatewayUnderTest['deps'], token: string): Promise<Principal> {
  return deps.auth.authenticate(new Headers({ authorization: `Bearer ${token}` }), 'jwt');
}

beforeAll(async () => {
  upstreamA = await startMcpServer({
    name: 'tenant-a',
    tools: [
      { name: 'a_secret_tool', inputSchema: { password: z.string().optional() }, handler: () => 'tenant A data' },
    ],
  });
  upstreamB = await startMcpServer({ name: 'tenant-b', tools: [{ name: 'b_tool', handler: () => 'tenant B data' }] });
  gw = await startGatewayUnderTest();
  const adminA = await as(
    gw.deps,
    await tokenFor(
      gw.deps,
      await createUser(gw.deps, {
        email: `ta-${Date.now()}@example.com`,
        roles: ['tenant_admin'],
        tenantId: 'tenant-a',
      }),
    ),
  );
  const adminB = await as(
    gw.deps,
    await tokenFor(
      gw.deps,
      await createUser(gw.deps, {
        email: `tb-${Date.now()}@example.com`,
        roles: ['tenant_admin'],
        tenantId: 'tenant-b',
      }),
    ),
  );
  const setUp = async (admin: Principal, upstream: McpFixture, prefix: string) => {
    const provider = await gw.catalog.providers.create(admin, {
      name: prefix,
      pattern: `${prefix}_*`,
      endpoint: upstream.url,
      authType: 'none',
      priority: 0,
    });
    const { agent, runtimeToken } = await gw.catalog.agents.create(admin, {
      name: `${prefix}-bot`,
      upstreamUrl: 'http://127.0.0.1:9/agent',
    });
    await gw.catalog.rules.create(admin, {
      subjectType: 'agent',
      subjectId: agent.id,
      providerId: '*',
      action: 'allow',
      toolPattern: '*',
    });
    return { provider: provider.id, agent: agent.id, token: runtimeToken };
  };
  a = await setUp(adminA, upstreamA, 'a');
  b = await setUp(adminB, upstreamB, 'b');
  userB = await tokenFor(
    gw.deps,
    await createUser(gw.deps, {
      email: `ub-${Date.now()}@example.com`,
      roles: ['agent_creator', 'tenant_admin'],
      tenantId: 'tenant-b',
    }),
  );
  loner = await tokenFor(
    gw.deps,
    await createUser(gw.deps, { email: `loner-${Date.now()}@example.com`, roles: ['agent_creator'] }),
  );
});

afterAll(async () => {
  await gw?.close();
  await upstreamA?.close();
  await upstreamB?.close();
});

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/** One stateless (2026-07-28) JSON-RPC request. */
async function rpc(
  headers: Record<string, string>,
  method: string,
  params: Record<string, unknown> = {},
  path = '/api/v1/mcp/mcp',
) {
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-protocol-version': MODERN,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: modernMeta } }),
  });
  return {
    status: res.status,
    body: (await res.json()) as {
      result?: { tools?: { name: string }[]; content?: { text: string }[] };
      error?: { code: number; message: string; data?: Record<string, unknown> };
      code?: string;
    },
  };
}

/** A legacy session opened by `headers`; returns its id. */
async function openSession(headers: Record<string, string>, path = '/api/v1/mcp/mcp'): Promise<string> {
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: SESSION_VERSION, capabilities: {}, clientInfo: { name: 'attacker', version: '1' } },
    }),
  });
  expect(res.status).toBe(200);
  return res.headers.get('mcp-session-id')!;
}

function inSession(
  headers: Record<string, string>,
  sid: string,
  method = 'tools/list',
  httpMethod = 'POST',
  path = '/api/v1/mcp/mcp',
) {
  return fetch(gw.url + path, {
    method: httpMethod,
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sid,
      'mcp-protocol-version': SESSION_VERSION,
    },
    ...(httpMethod === 'POST' ? { body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params: {} }) } : {}),
  });
}

describe('cross-tenant reach on the MCP endpoints', () => {
  it("tenant B's agent lists only tenant B's tools and cannot call tenant A's (the upstream never hears of it)", async () => {
    const list = await rpc(auth(b.token), 'tools/list');
    expect(list.body.result?.tools?.map((t) => t.name)).toEqual(['b_tool']);
    const before = upstreamA.requests.length;
    const call = await rpc(auth(b.token), 'tools/call', { name: 'a_secret_tool', arguments: {} });
    expect(call.body.error).toMatchObject({ code: -32602, message: 'Unknown tool: a_secret_tool' });
    expect(upstreamA.requests.length).toBe(before);
  });

  it('providers=<tenant A id> narrows to nothing rather than widening', async () => {
    const list = await rpc(auth(b.token), 'tools/list', {}, `/api/v1/mcp/mcp?providers=${a.provider}`);
    expect(list.body.result?.tools).toEqual([]);
    const call = await rpc(
      auth(b.token),
      'tools/call',
      { name: 'a_secret_tool', arguments: {} },
      `/api/v1/mcp/mcp?providers=${a.provider}`,
    );
    expect(call.body.error?.code).toBe(-32602);
  });

  it("the proxy with tenant A's provider id is a 404 for tenant B's agent, user and a tenant-less user, on every method", async () => {
    const before = upstreamA.requests.length;
    for (const token of [b.token, userB, loner]) {
      for (const method of ['tools/list', 'tools/call', 'prompts/list']) {
        const res = await rpc(
          auth(token),
          method,
          { name: 'a_secret_tool', arguments: {} },
          `/api/v1/mcp-proxy/${a.provider}/mcp`,
        );
        expect(res.status).toBe(404);
        expect(res.body.error?.data?.code ?? res.body.code).toBe('NOT_FOUND');
      }
    }
    expect(upstreamA.requests.length).toBe(before);
  });

  it("a tenant-less self-registered user sees no tenant's tools", async () => {
    expect((await rpc(auth(loner), 'tools/list')).body.result?.tools).toEqual([]);
    expect((await rpc(auth(userB), 'tools/list')).body.result?.tools?.map((t) => t.name) ?? []).not.toContain(
      'a_secret_tool',
    );
  });

  it("tool-gate evaluate with tenant A's providerId is a 404 for tenant B", async () => {
    for (const token of [b.token, userB, loner]) {
      const res = await fetch(`${gw.url}/api/v1/tool-gate/evaluate`, {
        method: 'POST',
        headers: { ...auth(token), 'content-type': 'application/json' },
        body: JSON.stringify({ toolName: 'a_secret_tool', providerId: a.provider, params: {} }),
      });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
  });
});

describe('tool-gate audit ids are bound to their owner', () => {
  const gatePost = (token: string, path: string, body: unknown) =>
    fetch(`${gw.url}/api/v1/tool-gate/${path}`, {
      method: 'POST',
      headers: { ...auth(token), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it("another agent, a user of another tenant, a forged or altered id cannot complete tenant A's record (404, learning nothing); the owner can", async () => {
    const evaluated = (await (
      await gatePost(a.token, 'evaluate', { toolName: 'a_secret_tool', providerId: a.provider })
    ).json()) as { auditId: string; decision: string };
    expect(evaluated.decision).toBe('allow');
    const [uuid, mac] = evaluated.auditId.split('.');
    const flipped = `${mac![0] === 'A' ? 'B' : 'A'}${mac!.slice(1)}`;
    const attempts: [string, string][] = [
      [b.token, evaluated.auditId],
      [userB, evaluated.auditId],
      [loner, evaluated.auditId],
      [a.token, uuid!],
      [a.token, `${uuid}.${flipped}`],
      [a.token, `00000000-0000-4000-8000-000000000000.${mac}`],
    ];
    for (const [token, auditId] of attempts) {
      const res = await gatePost(token, 'audit', { auditId, result: { forged: true }, durationMs: 1 });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', message: 'Audit record not found' });
    }
    const own = await gatePost(a.token, 'audit', { auditId: evaluated.auditId, result: { ok: true }, durationMs: 5 });
    expect(own.status).toBe(200);
    expect(await own.json()).toEqual({ success: true, auditId: evaluated.auditId });
    // A record the gate created (no auditId) is bound the same way.
    const created = (await (
      await gatePost(a.token, 'audit', { toolName: 'a_secret_tool', providerId: a.provider, result: {} })
    ).json()) as { auditId: string };
    expect((await gatePost(b.token, 'audit', { auditId: created.auditId, result: {} })).status).toBe(404);
    expect((await gatePost(a.token, 'audit', { auditId: created.auditId, status: 'failed', error: 'x' })).status).toBe(
      200,
    );
  });
});

describe('MCP sessions are bound to their opener', () => {
  it("another agent's or user's replay of a session id, a tampered id and DELETE of someone else's session are 404; the owner's session lives on", async () => {
    const sid = await openSession(auth(a.token));
    expect((await inSession(auth(a.token), sid)).status).toBe(200);
    for (const token of [b.token, userB, loner]) {
      expect((await inSession(auth(token), sid)).status).toBe(404);
      expect((await inSession(auth(token), sid, undefined, 'GET')).status).toBe(404);
      expect((await inSession(auth(token), sid, undefined, 'DELETE')).status).toBe(404);
    }
    const tampered = `${sid.slice(0, -2)}${sid.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await inSession(auth(a.token), tampered)).status).toBe(404);
    expect((await inSession(auth(a.token), 'x'.repeat(100_000))).status).toBeLessThan(500);
    // Still the owner's, still alive.
    expect((await inSession(auth(a.token), sid)).status).toBe(200);
  });

  it('caps the server streams (GET) one caller holds open: the 17th is a 429 JSON-RPC error, a closed one frees its slot', async () => {
    const sid = await openSession(auth(b.token));
    const open = async () => {
      const controller = new AbortController();
      const res = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
        headers: {
          ...auth(b.token),
          accept: 'text/event-stream',
          'mcp-session-id': sid,
          'mcp-protocol-version': SESSION_VERSION,
        },
        signal: controller.signal,
      });
      return { res, close: () => controller.abort() };
    };
    const streams = [];
    for (let i = 0; i < 16; i++) {
      const s = await open();
      expect(s.res.status).toBe(200);
      streams.push(s);
    }
    const refused = await open();
    expect(refused.res.status).toBe(429);
    expect(refused.res.headers.get('retry-after')).toBe('5');
    expect(await refused.res.json()).toMatchObject({ error: { code: -32029, data: { code: 'RATE_LIMITED' } } });
    // Another caller is not affected.
    const other = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
      headers: {
        ...auth(a.token),
        accept: 'text/event-stream',
        'mcp-session-id': await openSession(auth(a.token)),
        'mcp-protocol-version': SESSION_VERSION,
      },
    });
    expect(other.status).toBe(200);
    await other.body?.cancel();
    streams.pop()!.close();
    await expect
      .poll(async () => {
        const s = await open();
        if (s.res.status === 200) streams.push(s);
        else await s.res.body?.cancel();
        return s.res.status;
      })
      .toBe(200);
    for (const s of streams) s.close();
  });

  it('a unified session cannot be continued on the proxy (or the other way round)', async () => {
    const sid = await openSession(auth(a.token));
    expect(
      (await inSession(auth(a.token), sid, 'tools/list', 'POST', `/api/v1/mcp-proxy/${a.provider}/mcp`)).status,
    ).toBe(404);
    const proxied = await openSession(auth(a.token), `/api/v1/mcp-proxy/${a.provider}/mcp`);
    expect((await inSession(auth(a.token), proxied)).status).toBe(404);
  });

  it('a session ends for an agent that is disabled (403) or whose token is rotated (401)', async () => {
    const admin = gw.admin;
    const { agent, runtimeToken } = await gw.catalog.agents.create(admin, {
      name: 'rotating',
      upstreamUrl: 'http://127.0.0.1:9/agent',
    });
    await gw.catalog.rules.create(admin, {
      subjectType: 'agent',
      subjectId: agent.id,
      providerId: '*',
      action: 'allow',
      toolPattern: '*',
    });
    const sid = await openSession(auth(runtimeToken));
    expect((await inSession(auth(runtimeToken), sid)).status).toBe(200);
    await gw.catalog.agents.setActive(admin, agent.id, false);
    expect((await inSession(auth(runtimeToken), sid)).status).toBe(403);
    await gw.catalog.agents.setActive(admin, agent.id, true);
    const rotated = await gw.catalog.agents.regenerateToken(admin, agent.id);
    expect((await inSession(auth(runtimeToken), sid)).status).toBe(401);
    // The new token is the same agent: the session is still its own.
    expect((await inSession(auth(rotated), sid)).status).toBe(200);
  });
});

describe('hostile upstreams and oversized input', () => {
  const longName = `long_${'x'.repeat(300)}`;
  let hostile: McpFixture;
  let agentToken: string;

  beforeAll(async () => {
    hostile = await startMcpServer({
      name: 'hostile',
      tools: [
        { name: 'long_ok', handler: () => 'fine' },
        { name: longName, handler: () => 'should not matter' },
      ],
    });
    await gw.catalog.providers.create(gw.admin, {
      name: 'hostile',
      pattern: 'long_*',
      endpoint: hostile.url,
      authType: 'none',
      priority: 0,
    });
    const { agent, runtimeToken } = await gw.catalog.agents.create(gw.admin, {
      name: 'long-bot',
      upstreamUrl: 'http://127.0.0.1:9/agent',
    });
    await gw.catalog.rules.create(gw.admin, {
      subjectType: 'agent',
      subjectId: agent.id,
      providerId: '*',
      action: 'allow',
      toolPattern: 'long_*',
    });
    agentToken = runtimeToken;
  });
  afterAll(() => hostile?.close());

  it("a tool name over the glob cap offered by an upstream is left out of tools/list instead of failing everyone's list", async () => {
    const list = await rpc(auth(agentToken), 'tools/list');
    expect(list.status).toBe(200);
    expect(list.body.result?.tools?.map((t) => t.name)).toEqual(['long_ok']);
    const proxied = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
      method: 'POST',
      headers: {
        ...auth(agentToken),
        'content-type': 'application/json',
        accept: 'application/json',
        'mcp-protocol-version': MODERN,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: longName, arguments: {}, _meta: modernMeta },
      }),
    });
    expect(proxied.status).toBeLessThan(500);
    expect(((await proxied.json()) as { error?: { code: number } }).error?.code).toBeDefined();
  });

  it('an upstream that streams progress forever is cut off at MCP_UPSTREAM_TIMEOUT_MS (504), and stops being called', async () => {
    const quick = await startGatewayUnderTest({ env: { MCP_UPSTREAM_TIMEOUT_MS: '500' } });
    let stopped = false;
    const endless = await startMcpServer({
      name: 'endless',
      tools: [
        {
          name: 'endless',
          handler: async (_args, call) => {
            for (let i = 0; !call.signal?.aborted; i++) {
              await call.sendProgress?.(i);
              await new Promise((r) => setTimeout(r, 10));
            }
            stopped = true;
            return 'never seen';
          },
        },
      ],
    });
    try {
      await quick.catalog.providers.create(quick.admin, {
        name: 'endless',
        pattern: '*',
        endpoint: endless.url,
        authType: 'none',
        priority: 0,
      });
      const { agent, runtimeToken } = await quick.catalog.agents.create(quick.admin, {
        name: 'x',
        upstreamUrl: 'http://127.0.0.1:9/a',
      });
      await quick.catalog.rules.create(quick.admin, {
        subjectType: 'agent',
        subjectId: agent.id,
        providerId: '*',
        action: 'allow',
        toolPattern: '*',
      });
      // The upstream's progress never ends: only the call deadline can answer, and a deadline that
      // progress kept pushing back fails by the test's own timeout.
      for (const accept of ['application/json', 'application/json, text/event-stream']) {
        const res = await fetch(`${quick.url}/api/v1/mcp/mcp`, {
          method: 'POST',
          headers: {
            ...auth(runtimeToken),
            'content-type': 'application/json',
            accept,
            'mcp-protocol-version': MODERN,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'endless', arguments: {}, _meta: { ...modernMeta, progressToken: 'p' } },
          }),
        });
        const text = await res.text();
        expect(text).toContain('-32011');
        if (accept === 'application/json') expect(res.status).toBe(504);
      }
      await expect.poll(() => stopped).toBe(true);
    } finally {
      await quick.close();
      await endless.close();
    }
  });

  it('answers an oversized body, a deeply nested one and a huge batch with a 4xx before any upstream work', async () => {
    // node:http rather than fetch: a server may answer 413 and close while the body is still being sent.
    const post = (body: string) =>
      new Promise<{ status: number }>((resolve, reject) => {
        const req = httpRequest(
          `${gw.url}/api/v1/mcp/mcp`,
          {
            method: 'POST',
            agent: false,
            headers: {
              ...auth(a.token),
              'content-type': 'application/json',
              accept: 'application/json',
              'mcp-protocol-version': MODERN,
            },
          },
          (res) => {
            res.resume();
            resolve({ status: res.statusCode ?? 0 });
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const before = upstreamA.requests.length;
    const huge = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'a_secret_tool', arguments: { blob: 'x'.repeat(1100 * 1024) }, _meta: modernMeta },
      }),
    );
    expect(huge.status).toBe(413);
    const deep = await post(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a_secret_tool","arguments":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}`,
    );
    expect(deep.status).toBe(400);
    const batch = await post(
      JSON.stringify(
        Array.from({ length: 20_000 }, (_, i) => ({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: 'a_secret_tool', arguments: {} },
        })),
      ),
    );
    expect(batch.status).toBeGreaterThanOrEqual(400);
    expect(batch.status).toBeLessThan(500);
    expect(upstreamA.requests.length).toBe(before);
  });
});
