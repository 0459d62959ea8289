import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { GATEWAY_RPC } from './rpc-errors.js';

const MODERN = '2026-07-28';
const meta = {
  _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} },
};

describe('MCP rate limits per agent and per tenant (real HTTP)', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGatewayUnderTest({
      env: { RATE_LIMIT_AGENT: '2', RATE_LIMIT_TENANT: '3', RATE_LIMIT_WINDOW_MS: '60000' },
    });
  });
  afterAll(() => gw?.close());

  const call = (token: string, id: number) =>
    fetch(`${gw.url}/api/v1/mcp/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: meta }),
    });
  const agentOf = async (tenantId: string) =>
    (
      await gw.catalog.agents.create(gw.admin, {
        name: `bot-${tenantId}`,
        upstreamUrl: 'http://127.0.0.1:9/agent',
        tenantId,
      })
    ).runtimeToken;

  it('answers HTTP 429 with Retry-After and a JSON-RPC error past the agent quota, then the tenant quota covers its other agents', async () => {
    const first = await agentOf('t-rl');
    expect((await call(first, 1)).status).toBe(200);
    expect((await call(first, 2)).status).toBe(200);
    const refused = await call(first, 3);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: GATEWAY_RPC.RATE_LIMITED,
        message: expect.stringContaining('agent'),
        data: { code: 'RATE_LIMITED', message: expect.stringContaining('agent'), retryAfter: expect.any(Number) },
      },
    });
    // Three calls of the tenant are spent (the refused one too): its second agent is refused as well.
    const second = await agentOf('t-rl');
    const tenantRefused = await call(second, 4);
    expect(tenantRefused.status).toBe(429);
    expect(((await tenantRefused.json()) as { error: { message: string } }).error.message).toContain('tenant');
    // Another tenant is untouched; users without an agent count against their tenant only (admin: none).
    expect((await call(await agentOf('t-other'), 5)).status).toBe(200);
    expect((await call(gw.adminToken, 6)).status).toBe(200);
  });
});
