import type { ConfirmationGate, HeldCall } from '@agentgw/core';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentOnProvider } from './agent-on-provider.fixtures.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { MAX_BATCH_MESSAGES } from './mcp.routes.js';

// One 2025-03-26 batch used to fan out into any number of calls (120 held confirmations in one POST).

let gw: GatewayUnderTest;
let upstream: McpFixture;
let token: string;
const held: HeldCall[] = [];
const gate: ConfirmationGate = {
  async hold(call) {
    held.push(call);
    return { decision: 'rejected', confirmationId: 'c', reason: 'no' };
  },
  redeem: async () => false,
};

beforeAll(async () => {
  upstream = await startMcpServer({ name: 'risky', tools: [{ name: 'risky', handler: () => 'done' }] });
  gw = await startGatewayUnderTest({ gate });
  token = (
    await createAgentOnProvider(
      gw,
      { name: 'risky', endpoint: upstream.url },
      { name: 'batcher', action: 'require_confirmation' },
    )
  ).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}/api/v1/mcp/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json',
      ...headers,
    },
    body: JSON.stringify(body),
  });

async function session(): Promise<string> {
  const res = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  return res.headers.get('mcp-session-id')!;
}

const calls = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    jsonrpc: '2.0',
    id: i + 1,
    method: 'tools/call',
    params: { name: 'risky', arguments: { i } },
  }));

describe('batch length cap', () => {
  it(`refuses a batch of ${MAX_BATCH_MESSAGES + 1} as a whole: 400, -32600 naming the limit, nothing held`, async () => {
    const headers = { 'mcp-session-id': await session(), 'mcp-protocol-version': '2025-03-26' };
    held.length = 0;
    for (const n of [MAX_BATCH_MESSAGES + 1, 120]) {
      const res = await post(calls(n), headers);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        id: null,
        error: {
          code: -32600,
          message: `A batch may hold at most ${MAX_BATCH_MESSAGES} messages`,
          data: { limit: MAX_BATCH_MESSAGES },
        },
      });
    }
    // Sessionless at 2025-03-26 too.
    expect((await post(calls(MAX_BATCH_MESSAGES + 1), { 'mcp-protocol-version': '2025-03-26' })).status).toBe(400);
    expect(held).toHaveLength(0);
  });

  it(`serves a batch of exactly ${MAX_BATCH_MESSAGES}`, async () => {
    const headers = { 'mcp-session-id': await session(), 'mcp-protocol-version': '2025-03-26' };
    held.length = 0;
    const res = await post(calls(MAX_BATCH_MESSAGES), headers);
    expect(res.status).toBe(200);
    const answers = (await res.json()) as { error: { code: number } }[];
    expect(answers).toHaveLength(MAX_BATCH_MESSAGES);
    expect(answers.every((a) => a.error.code === -32004)).toBe(true);
    expect(held).toHaveLength(MAX_BATCH_MESSAGES);
  });
});
