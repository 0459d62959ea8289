import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';
import type { RecordingUpstream } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { startModernUpstream } from '../testing/modern-upstream.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';

// 2026-07-28 wire checks over HTTP, in front of a stateless upstream: Mcp-Param-* headers
// (SEP-2243) checked against the arguments and sent on, and input_required results (SEP-2322)
// asking only for what the client declared.
let gw: GatewayUnderTest;
let upstream: RecordingUpstream;
let providerId: string;
let runtimeToken: string;

const TOOLS = [
  {
    name: 'query',
    inputSchema: {
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, sql: { type: 'string' } },
    },
  },
  { name: 'ask', inputSchema: { type: 'object' } },
];

/** One 2026-07-28 request with the given extra headers and client capabilities. */
async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
  capabilities: Record<string, unknown> = {},
) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${runtimeToken}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method,
      params: {
        ...params,
        _meta: { [META_PROTOCOL_VERSION]: MODERN_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: capabilities },
      },
    }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } },
  };
}

const endpoints = () => [`${gw.url}/api/v1/mcp/mcp`, `${gw.url}/api/v1/mcp-proxy/${providerId}/mcp`];
const upstreamCalls = () => upstream.requests.filter((r) => (r.body as { method?: string })?.method === 'tools/call');

beforeAll(async () => {
  upstream = await startModernUpstream({ name: 'modern', capabilities: { tools: {} } }, (method, params) => {
    switch (method) {
      case 'tools/list':
        return { result: { tools: TOOLS, ttlMs: 0, cacheScope: 'private' } };
      case 'tools/call':
        if (params?.name === 'ask') {
          const inputRequests = {
            name: {
              method: 'elicitation/create',
              params: { mode: 'form', message: 'Your name?', requestedSchema: { type: 'object', properties: {} } },
            },
            summary: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 10 } },
          };
          return { result: { resultType: 'input_required', inputRequests, requestState: 'opaque-state' } };
        }
        return { result: { content: [{ type: 'text', text: 'ok' }] } };
      default:
        return undefined;
    }
  });
  gw = await startGatewayUnderTest();
  const { catalog, admin } = gw;
  const provider = await catalog.providers.create(admin, {
    name: 'modern',
    pattern: '*',
    endpoint: upstream.url,
    authType: 'none',
    priority: 0,
  });
  providerId = provider.id;
  runtimeToken = (await createRuleBoundAgent(gw)).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

describe('Mcp-Param-* headers', () => {
  it('sends the value upstream as a header when the client sent it matching the body (plain and Base64)', async () => {
    for (const url of endpoints()) {
      const before = upstreamCalls().length;
      const plain = await rpc(
        url,
        'tools/call',
        { name: 'query', arguments: { region: 'us-west1', sql: 'x' } },
        { 'mcp-param-region': ' us-west1 ' },
      );
      expect(plain.status).toBe(200);
      expect(plain.body.result).toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
      const encoded = await rpc(
        url,
        'tools/call',
        { name: 'query', arguments: { region: 'Hello, 世界' } },
        { 'Mcp-Param-Region': `=?base64?${Buffer.from('Hello, 世界').toString('base64')}?=` },
      );
      expect(encoded.status).toBe(200);
      const sent = upstreamCalls().slice(before);
      expect(sent.map((r) => r.headers['mcp-param-region'])).toEqual([
        'us-west1',
        `=?base64?${Buffer.from('Hello, 世界').toString('base64')}?=`,
      ]);
    }
  });

  it('refuses a missing, different or badly encoded header with 400 -32020 and never forwards the call', async () => {
    const before = upstreamCalls().length;
    for (const url of endpoints()) {
      const cases: { headers: Record<string, string>; region: string }[] = [
        { headers: {}, region: 'us-west1' },
        { headers: { 'mcp-param-region': 'eu-west1' }, region: 'us-west1' },
        { headers: { 'mcp-param-region': '=?base64?SGVsbG8?=' }, region: 'Hello' },
        { headers: { 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' }, region: 'Hello' },
      ];
      for (const { headers, region } of cases) {
        const reply = await rpc(url, 'tools/call', { name: 'query', arguments: { region } }, headers);
        expect(reply.status, JSON.stringify(headers)).toBe(400);
        expect(reply.body.error).toMatchObject({ code: -32020, message: expect.stringContaining('mcp-param-region') });
      }
      // A header without its value in the body disagrees too; no value and no header is a plain call.
      expect(
        (await rpc(url, 'tools/call', { name: 'query', arguments: {} }, { 'mcp-param-region': 'us-west1' })).status,
      ).toBe(400);
      expect((await rpc(url, 'tools/call', { name: 'query', arguments: { region: null } })).status).toBe(200);
    }
    expect(upstreamCalls().length).toBe(before + 2);
  });
});

describe('input_required results', () => {
  it('keep requestState untouched and carry only the input requests the client can answer', async () => {
    for (const url of endpoints()) {
      const samplingOnly = await rpc(url, 'tools/call', { name: 'ask', arguments: {} }, {}, { sampling: {} });
      expect(samplingOnly.status).toBe(200);
      expect(samplingOnly.body.result).toMatchObject({ resultType: 'input_required', requestState: 'opaque-state' });
      expect(Object.keys(samplingOnly.body.result!.inputRequests as object)).toEqual(['summary']);
      const both = await rpc(url, 'tools/call', { name: 'ask', arguments: {} }, {}, { sampling: {}, elicitation: {} });
      expect(Object.keys(both.body.result!.inputRequests as object).sort()).toEqual(['name', 'summary']);
      const none = await rpc(url, 'tools/call', { name: 'ask', arguments: {} });
      expect(none.status).toBe(400);
      expect(none.body.error).toMatchObject({ code: -32021 });
    }
  });
});
