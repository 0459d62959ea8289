import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, startMcpServer, tokenFor, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { createGatewayHost } from './all-in-one.js';

// Attacks across services of the all-in-one: what an MCP call leaves in the audit log (masked,
// attributed to who really called), who can read it, and where an agent's session token opens doors.

// Response bodies are whatever JSON the API answered.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let deps: TestDeps;
let host: Host;
let upstream: McpFixture;
let adminToken: string;
let agent: { id: string; token: string };
let providerId: string;
let tenantAdminB: string;
let userB: string;
let loner: string;

async function api(
  method: string,
  path: string,
  options: { token?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await host.app.request(path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const MODERN = '2026-07-28';
const toolsCall = (headers: Record<string, string>, name: string, args: Record<string, unknown>) =>
  api('POST', '/api/v1/mcp/mcp', {
    headers: { ...headers, accept: 'application/json', 'mcp-protocol-version': MODERN },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    },
  });

beforeAll(async () => {
  deps = await createTestDeps({ env: { EGRESS_POLICY: 'allow-private' } });
  host = await createGatewayHost(deps);
  await host.start();
  upstream = await startMcpServer({
    name: 'login',
    tools: [
      {
        name: 'login',
        inputSchema: {
          user: z.string(),
          password: z.string(),
          apiKey: z.string(),
          nested: z.object({ client_secret: z.string() }),
        },
        handler: (args) => `logged in as ${String((args as { user?: string }).user)}`,
      },
    ],
  });
  const admin = await createUser(deps, { email: `attack-admin-${Date.now()}@example.com`, roles: ['admin'] });
  adminToken = await tokenFor(deps, admin);
  const provider = (
    await api('POST', '/api/v1/admin/tool-providers', {
      token: adminToken,
      body: { name: 'login', pattern: '*', endpoint: upstream.url, tenantId: 'tenant-a' },
    })
  ).body.provider;
  const created = (
    await api('POST', '/api/v1/admin/agents', {
      token: adminToken,
      body: { name: 'attack-bot', upstreamUrl: 'http://127.0.0.1:9/agent', tenantId: 'tenant-a' },
    })
  ).body;
  agent = { id: created.agent.id, token: created.runtime_token };
  providerId = provider.id;
  expect(
    (
      await api('POST', '/api/v1/admin/provider-access', {
        token: adminToken,
        body: {
          subjectType: 'agent',
          subjectId: agent.id,
          providerId: provider.id,
          action: 'allow',
          tenantId: 'tenant-a',
        },
      })
    ).status,
  ).toBe(201);
  tenantAdminB = await tokenFor(
    deps,
    await createUser(deps, {
      email: `tb-admin-${Date.now()}@example.com`,
      roles: ['tenant_admin'],
      tenantId: 'tenant-b',
    }),
  );
  userB = await tokenFor(
    deps,
    await createUser(deps, {
      email: `tb-user-${Date.now()}@example.com`,
      roles: ['agent_creator'],
      tenantId: 'tenant-b',
    }),
  );
  loner = await tokenFor(
    deps,
    await createUser(deps, { email: `loner-${Date.now()}@example.com`, roles: ['agent_creator'] }),
  );
});

afterAll(async () => {
  await host?.stop({ deadlineMs: 1_000 });
  await upstream?.close();
  await deps?.close();
});

describe('audit of an MCP call', () => {
  let row: Json;

  beforeAll(async () => {
    // Identity headers a caller might try to smuggle in: none of them is the gateway's word.
    const spoof = {
      'x-user-id': 'victim-user',
      'x-end-user-id': 'victim-user',
      'x-end-user-email': 'victim@example.com',
      'x-tenant-id': 'tenant-b',
      'x-gateway-agent-id': 'other-agent',
    };
    const call = await toolsCall({ authorization: `Bearer ${agent.token}`, ...spoof }, 'login', {
      user: 'bob',
      password: 'hunter2',
      apiKey: 'sk-live-123',
      nested: { client_secret: 'deep-secret' },
    });
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    expect(call.body.result.content[0].text).toBe('logged in as bob');
    // The upstream saw the gateway's identity, not the caller's headers.
    const seen = upstream.calls.at(-1)!.headers;
    expect(seen['x-gateway-agent-id']).toBe(agent.id);
    expect(seen['x-user-id']).toBeUndefined();
    expect(seen['x-tenant-id']).toBe('tenant-a');
    row = await vi.waitFor(
      async () => {
        const list = await api('GET', `/api/v1/audit/logs?agent_id=${agent.id}`, { token: adminToken });
        const found = list.body.data?.find((r: Json) => r.status === 'completed');
        if (!found) throw new Error('not written yet');
        return found;
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it('masks secrets in the arguments end to end (the log never holds them)', async () => {
    const text = JSON.stringify(row);
    for (const secret of ['hunter2', 'sk-live-123', 'deep-secret']) expect(text).not.toContain(secret);
    expect(row.arguments.user).toBe('bob');
    expect(row.arguments.password).not.toBe('hunter2');
    const exported = await host.app.request(`/api/v1/audit/export?agent_id=${agent.id}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    const ndjson = await exported.text();
    expect(ndjson).toContain(row.id);
    for (const secret of ['hunter2', 'sk-live-123', 'deep-secret']) expect(ndjson).not.toContain(secret);
  });

  it('attributes the row to the agent and its tenant, not to the identity headers the caller sent', () => {
    expect(row).toMatchObject({ agentId: agent.id, tenantId: 'tenant-a' });
    expect(row.userId ?? null).toBeNull();
    expect(JSON.stringify(row)).not.toContain('victim-user');
  });

  it("another tenant's admin or user and a tenant-less user read none of it: lists, one row, export, stats", async () => {
    for (const token of [tenantAdminB, userB, loner]) {
      const list = await api('GET', `/api/v1/audit/logs?agent_id=${agent.id}&user_id=&tenant_id=tenant-a`, { token });
      expect(list.status === 400 || list.body.pagination?.total === 0, JSON.stringify(list.body).slice(0, 200)).toBe(
        true,
      );
      expect((await api('GET', `/api/v1/audit/logs?tenant_id=tenant-a`, { token })).body.data ?? []).toEqual([]);
      expect((await api('GET', `/api/v1/audit/logs/${row.id}`, { token })).status).toBe(404);
      const exported = await host.app.request(`/api/v1/audit/export?tenant_id=tenant-a`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(await exported.text()).not.toContain(row.id);
      expect((await api('GET', '/api/v1/audit/stats', { token })).status).toBe(403);
    }
  });
});

describe('the tool gate audit trail', () => {
  it("a runtime cannot complete its own denied call into a 'completed' record", async () => {
    expect(
      (
        await api('POST', '/api/v1/admin/provider-access', {
          token: adminToken,
          body: {
            subjectType: 'agent',
            subjectId: agent.id,
            providerId,
            action: 'deny',
            toolPattern: 'forbidden',
            tenantId: 'tenant-a',
          },
        })
      ).status,
    ).toBe(201);
    const headers = { authorization: `Bearer ${agent.token}` };
    const denied = await api('POST', '/api/v1/tool-gate/evaluate', {
      headers,
      body: { toolName: 'forbidden', providerId, params: {} },
    });
    expect(denied.body).toMatchObject({ decision: 'denied' });
    const forged = await api('POST', '/api/v1/tool-gate/audit', {
      headers,
      body: { auditId: denied.body.auditId, status: 'completed', result: { faked: true }, durationMs: 1 },
    });
    expect(forged.status).toBe(200);
    const stored = await vi.waitFor(
      async () => {
        const res = await api('GET', `/api/v1/audit/logs/${encodeURIComponent(denied.body.auditId)}`, {
          token: adminToken,
        });
        if (res.body?.data?.result?.faked !== true) throw new Error('not written yet');
        return res.body.data;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(stored.status).toBe('rejected');
  });
});

describe("an agent's session token", () => {
  it('opens only the routes that opt in (MCP, tool gate), only with its own X-Agent-Id; vault and admin routes answer 403', async () => {
    const endUser = await createUser(deps, {
      email: `end-${Date.now()}@example.com`,
      roles: ['admin'],
      tenantId: 'tenant-a',
    });
    const { token } = await deps.auth.issueSessionToken({
      endUserId: endUser.id,
      email: endUser.email,
      roles: endUser.roles,
      tenantId: 'tenant-a',
      agentId: agent.id,
      requestId: 'req_attack',
    });
    const as = { 'x-gateway-session-token': token, 'x-agent-id': agent.id };
    const list = await api('POST', '/api/v1/mcp/mcp', {
      headers: { ...as, accept: 'application/json', 'mcp-protocol-version': MODERN },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
    });
    expect(list.status).toBe(200);
    // Even an admin end user's session token is no admin credential.
    for (const [method, path] of [
      ['GET', '/api/v1/credentials'],
      ['POST', '/api/v1/credentials/resolve'],
      ['GET', '/api/v1/admin/agents'],
      ['GET', '/api/v1/admin/users'],
      ['GET', '/api/v1/audit/logs'],
      ['GET', '/api/v1/confirmation/list'],
    ] as const) {
      const res = await api(method, path, {
        headers: as,
        body: method === 'POST' ? { serviceTypes: ['x'] } : undefined,
      });
      expect([401, 403], `${method} ${path} → ${res.status}`).toContain(res.status);
      expect(res.body).toMatchObject({ code: expect.any(String) });
    }
    const otherAgent = await api('POST', '/api/v1/tool-gate/evaluate', {
      headers: { ...as, 'x-agent-id': 'some-other-agent' },
      body: { toolName: 'login', providerId: 'x' },
    });
    expect(otherAgent.status).toBe(401);
  });
});
