import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, startMcpServer, tokenFor, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { createGatewayHost } from './all-in-one.js';

// The spec's MCP examples as written: a bearer token and a plain JSON-RPC POST, no initialize,
// no Mcp-Session-Id, no version. Served statelessly by the whole gateway (policy, confirmation
// hub, audit writer), on the unified endpoint and on the per-provider proxy.

// Response bodies are whatever JSON the API answered.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let deps: TestDeps;
let host: Host;
let upstream: McpFixture;
let adminToken: string;
let agent: { id: string; token: string };
let providerId: string;

async function api(
  method: string,
  path: string,
  options: { token?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await host.app.request(path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** A plain JSON-RPC POST exactly as the spec shows it: no session, no version. */
const rpc = (path: string, message: unknown, headers: Record<string, string> = {}) =>
  api('POST', path, { token: agent.token, headers: { accept: 'application/json', ...headers }, body: message });

beforeAll(async () => {
  deps = await createTestDeps({ env: { EGRESS_POLICY: 'allow-private' } });
  host = await createGatewayHost(deps);
  await host.start();
  upstream = await startMcpServer({
    name: 'tools',
    tools: [
      { name: 'echo', inputSchema: { text: z.string() }, handler: (args) => `echo:${String(args.text)}` },
      { name: 'secret', handler: () => 'must never run' },
      { name: 'risky', handler: () => 'risky done' },
    ],
  });
  adminToken = await tokenFor(
    deps,
    await createUser(deps, { email: `sessionless-admin-${Date.now()}@example.com`, roles: ['admin'] }),
  );
  providerId = (
    await api('POST', '/api/v1/admin/tool-providers', {
      token: adminToken,
      body: { name: 'tools', pattern: '*', endpoint: upstream.url },
    })
  ).body.provider.id;
  const created = (
    await api('POST', '/api/v1/admin/agents', {
      token: adminToken,
      body: { name: 'sessionless-bot', upstreamUrl: 'http://127.0.0.1:9/agent' },
    })
  ).body;
  agent = { id: created.agent.id, token: created.runtime_token };
  for (const [action, toolPattern] of [
    ['allow', '*'],
    ['deny', 'secret'],
    ['require_confirmation', 'risky'],
  ] as const) {
    const rule = await api('POST', '/api/v1/admin/provider-access', {
      token: adminToken,
      body: { subjectType: 'agent', subjectId: agent.id, providerId, action, toolPattern },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
  }
});

afterAll(async () => {
  await host?.stop({ deadlineMs: 1_000 });
  await upstream?.close();
  await deps?.close();
});

const paths = () =>
  [
    ['unified', '/api/v1/mcp/mcp'],
    ['proxy', `/api/v1/mcp-proxy/${providerId}/mcp`],
  ] as const;

describe.each([0, 1])('sessionless JSON-RPC (%s: 0 unified, 1 proxy)', (which) => {
  const path = () => paths()[which]![1];

  it('tools/list without initialize: the allowed tools, no session id, the 2025-11-25 shape', async () => {
    const res = await rpc(path(), { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.result.tools.map((t: Json) => t.name).sort()).toEqual(['echo', 'risky']);
    expect(res.body.result.resultType).toBeUndefined();
    expect(res.headers.get('mcp-session-id')).toBeNull();
  });

  it('tools/call allowed: the upstream result, made for the agent', async () => {
    const res = await rpc(path(), {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: `hi-${which}` } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.result.content[0].text).toBe(`echo:hi-${which}`);
    expect(upstream.calls.at(-1)!.headers['x-gateway-agent-id']).toBe(agent.id);
  });

  it('tools/call denied: 403 with -32003, the upstream never called', async () => {
    const before = upstream.calls.length;
    const res = await rpc(path(), {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'secret', arguments: {} },
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ id: 3, error: { code: -32003, data: { decision: 'denied' } } });
    expect(upstream.calls.length).toBe(before);
  });

  it('tools/call held: waits for a human, who confirms through POST /api/v1/confirmation/:id/confirm', async () => {
    const call = rpc(path(), {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'risky', arguments: { n: which } },
    });
    const pending = await vi.waitFor(
      async () => {
        const list = await api('GET', '/api/v1/confirmation/pending', { token: adminToken });
        const found = list.body.data?.find((r: Json) => r.tool.name === 'risky' && r.tool.arguments.n === which);
        if (!found) throw new Error('not held yet');
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    const confirmed = await api('POST', `/api/v1/confirmation/${pending.id}/confirm`, { token: adminToken });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const res = await call;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.result.content[0].text).toBe('risky done');
  });

  it('notifications/initialized without a session: 202', async () => {
    const res = await rpc(path(), { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
  });

  it('a request naming an unknown session is still a 404; initialize still opens a session', async () => {
    expect(
      (await rpc(path(), { jsonrpc: '2.0', id: 5, method: 'tools/list' }, { 'mcp-session-id': 'v1.not.a.session' }))
        .status,
    ).toBe(404);
    const init = await rpc(path(), {
      jsonrpc: '2.0',
      id: 6,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeTruthy();
  });
});

describe('sessionless revisions and batches', () => {
  const call = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: String(id) } },
  });

  it('a batch without a session is refused unless MCP-Protocol-Version says 2025-03-26', async () => {
    const refused = await rpc('/api/v1/mcp/mcp', [call(1), call(2)]);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: -32600 } });
    const served = await rpc('/api/v1/mcp/mcp', [call(1), call(2)], { 'mcp-protocol-version': '2025-03-26' });
    expect(served.status).toBe(200);
    expect(served.body.map((a: Json) => a.result.content[0].text).sort()).toEqual(['echo:1', 'echo:2']);
  });

  it('a 2026-07-28 request keeps its shape (resultType)', async () => {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const res = await rpc(
      '/api/v1/mcp/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } },
      { 'mcp-protocol-version': '2026-07-28' },
    );
    expect(res.status).toBe(200);
    expect(res.body.result.resultType).toBe('complete');
  });

  it('every sessionless tools/call left an audit row: completed, rejected, confirmed-then-completed', async () => {
    const rows: Json[] = await vi.waitFor(
      async () => {
        const list = await api('GET', `/api/v1/audit/logs?agent_id=${agent.id}&limit=100`, { token: adminToken });
        const data = list.body.data ?? [];
        const finished = (tool: string, status: string) =>
          data.filter((r: Json) => r.toolName === tool && r.status === status).length;
        // echo: 2 single calls + 2 in the batch; secret and risky: one per endpoint.
        if (
          finished('echo', 'completed') < 4 ||
          finished('secret', 'rejected') < 2 ||
          finished('risky', 'completed') < 2
        )
          throw new Error('not written yet');
        return data;
      },
      { timeout: 10_000, interval: 100 },
    );
    const risky = rows.filter((r) => r.toolName === 'risky');
    for (const row of risky) expect(row.confirmedBy).toBeTruthy();
    expect(new Set(rows.filter((r) => r.toolName === 'secret').map((r) => r.providerId))).toEqual(
      new Set([providerId]),
    );
  });
});
