import { createCatalogAdmin } from '@agentgw/catalog';
import { createLogger } from '@agentgw/core';
import { createHost, defineService, type Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMcpGateway } from './service.js';

// The per-request access-log line of an MCP POST names the JSON-RPC method and tool (a batch: its first, and its length).

type Line = Record<string, unknown>;
const lines: Line[] = [];
let deps: TestDeps;
let host: Host;
let token: string;

beforeAll(async () => {
  deps = await createTestDeps();
  const logger = createLogger({
    level: 'info',
    destination: { write: (s: string) => void lines.push(JSON.parse(s) as Line) },
  });
  const definition = defineService({ name: 'mcp-gateway', defaultPort: 0, create: (d) => createMcpGateway(d) });
  host = await createHost([definition], { ...deps, logger }, { name: 'mcp-gateway' });
  await host.start();
  const admin = await deps.auth.authenticate(
    new Headers({
      authorization: `Bearer ${await deps.auth.signUserToken(await createUser(deps, { email: `log-admin-${Date.now()}@example.com`, roles: ['admin'] }))}`,
    }),
    'jwt',
  );
  token = (
    await createCatalogAdmin(deps).agents.create(admin, { name: 'logged-bot', upstreamUrl: 'http://127.0.0.1:9/agent' })
  ).runtimeToken;
});

afterAll(async () => {
  await host?.stop({ deadlineMs: 1_000 });
  await deps?.close();
});

/** POSTs and returns the request's access-log line (requests here run one at a time). */
async function post(body: unknown, headers: Record<string, string> = {}): Promise<Line> {
  const before = lines.length;
  const res = await host.app.request('/api/v1/mcp/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  await res.text();
  return vi.waitFor(() => {
    const line = lines.slice(before).find((l) => l.path === '/api/v1/mcp/mcp');
    if (!line) throw new Error('not logged yet');
    return line;
  });
}

describe('MCP access-log fields', () => {
  it('names the method, the tool of a tools/call, and a batch by its first method and length', async () => {
    const list = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    expect(list).toMatchObject({ rpcMethod: 'tools/list' });
    expect(list.toolName).toBeUndefined();
    expect(
      await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } }),
    ).toMatchObject({ rpcMethod: 'tools/call', toolName: 'echo' });
    const batch = await post(
      [
        { jsonrpc: '2.0', id: 3, method: 'ping' },
        { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      ],
      { 'mcp-protocol-version': '2025-03-26' },
    );
    expect(batch).toMatchObject({ rpcMethod: 'ping', rpcBatch: 2 });
    // Never the arguments.
    expect(JSON.stringify(lines)).not.toContain('"arguments"');
  });
});
