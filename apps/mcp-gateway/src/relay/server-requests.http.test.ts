import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { registerClientFeatureTools, startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentOnProvider } from '../agent-on-provider.fixtures.js';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { recordingRealAuditTrail, type RecordedAuditWrite } from '../testing/recorded-audits.js';

/**
 * Server-to-client requests through the gateway, over HTTP with real SDK clients (1.x, and 2.x on
 * the 2025 era) that declare sampling, elicitation and roots and answer them: the upstream
 * lists the tools that need them only to such a client, and each call's request reaches the
 * client on the call's stream and its answer reaches the upstream. Sampling and elicitation are
 * audited, attributed to the tools/call that caused them.
 */
let gw: GatewayUnderTest;
let upstream: McpFixture;
let token: string;
const audits: RecordedAuditWrite[] = [];

const CAPABLE = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };
const ENDPOINT = '/api/v1/mcp/mcp';

beforeAll(async () => {
  upstream = await startMcpServer({
    name: 'asks-back',
    tools: [{ name: 'plain', handler: () => 'plain done' }],
    setup: registerClientFeatureTools,
  });
  gw = await startGatewayUnderTest({ audit: recordingRealAuditTrail(audits) });
  token = (
    await createAgentOnProvider(
      gw,
      { name: 'asks-back', endpoint: upstream.url },
      { name: 'relay-bot', action: 'allow' },
    )
  ).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const headers = () => ({ authorization: `Bearer ${token}` });
const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;
const names = (tools: { name: string }[]) => tools.map((t) => t.name).sort();

/** A 1.x SDK client declaring `capabilities`, answering sampling (echoing the prompt), elicitation (Ada) and roots. */
async function v1Client(capabilities: Record<string, unknown> = CAPABLE) {
  const client = new ClientV1({ name: 'relay-v1', version: '1.0.0' }, { capabilities });
  if ('sampling' in capabilities) {
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      const asked = request.params.messages[0]!.content as { text: string };
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `v1 heard ${asked.text}` } };
    });
  }
  if ('elicitation' in capabilities)
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'Ada' } }));
  if ('roots' in capabilities)
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///v1-root' }] }));
  await client.connect(new TransportV1(new URL(gw.url + ENDPOINT), { requestInit: { headers: headers() } }));
  return client;
}

/** The same with the 2.x SDK client on the 2025 era (initialize, a session). */
async function v2Client() {
  const client = new ClientV2({ name: 'relay-v2', version: '2.0.0' }, { capabilities: CAPABLE });
  client.setRequestHandler('sampling/createMessage', (request) => {
    const asked = request.params.messages[0]!.content as { text: string };
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `v2 heard ${asked.text}` } };
  });
  client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { name: 'Grace' } }));
  client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///v2-root' }] }));
  await client.connect(new TransportV2(new URL(gw.url + ENDPOINT), { requestInit: { headers: headers() } }));
  return client;
}

describe('server-to-client requests relayed through the gateway', () => {
  it('lists a capability-gated tool only to a client that declared the capability (lists kept per capability set)', async () => {
    const capable = await v1Client();
    const bare = await v1Client({});
    const samplingOnly = await v1Client({ sampling: {} });
    expect(names((await capable.listTools()).tools)).toEqual(['ask_model', 'ask_user', 'list_roots', 'plain']);
    expect(names((await bare.listTools()).tools)).toEqual(['plain']);
    expect(names((await samplingOnly.listTools()).tools)).toEqual(['ask_model', 'plain']);
    const inits = upstream.requests.filter((r) => (r.body as { method?: string } | undefined)?.method === 'initialize');
    expect(inits.map((r) => (r.body as { params: { capabilities: unknown } }).params.capabilities)).toEqual(
      expect.arrayContaining([{}, { sampling: {} }, CAPABLE]),
    );
    await Promise.all([capable.close(), bare.close(), samplingOnly.close()]);
  });

  it('relays sampling, elicitation and roots to a 1.x client on the call stream and its answers back to the upstream', async () => {
    const client = await v1Client();
    expect(textOf(await client.callTool({ name: 'ask_model', arguments: { prompt: 'capital of France?' } }))).toBe(
      'model said: v1 heard capital of France?',
    );
    expect(textOf(await client.callTool({ name: 'ask_user', arguments: {} }))).toBe('user accept: Ada');
    expect(textOf(await client.callTool({ name: 'list_roots', arguments: {} }))).toBe('file:///v1-root');
    expect(textOf(await client.callTool({ name: 'plain', arguments: {} }))).toBe('plain done');
    await client.close();
  });

  it('relays them to a 2.x client (2025 era) the same way', async () => {
    const client = await v2Client();
    expect(names((await client.listTools()).tools)).toEqual(['ask_model', 'ask_user', 'list_roots', 'plain']);
    expect(textOf(await client.callTool({ name: 'ask_model', arguments: { prompt: 'hi' } }))).toBe(
      'model said: v2 heard hi',
    );
    expect(textOf(await client.callTool({ name: 'ask_user', arguments: {} }))).toBe('user accept: Grace');
    expect(textOf(await client.callTool({ name: 'list_roots', arguments: {} }))).toBe('file:///v2-root');
    await client.close();
  });

  it('audits sampling and elicitation as records of their own, attributed to the tools/call that caused them', async () => {
    const client = await v1Client();
    const before = audits.length;
    await client.callTool({ name: 'ask_model', arguments: { prompt: 'audit me' } });
    await client.close();
    const created = audits
      .slice(before)
      .filter((a): a is Extract<RecordedAuditWrite, { op: 'create' }> => a.op === 'create');
    const call = created.find((a) => a.toolName === 'ask_model')!;
    const sampling = created.find((a) => a.toolName === 'sampling/createMessage')!;
    expect(sampling).toMatchObject({
      status: 'pending',
      arguments: { relayedFor: call.id, tool: 'ask_model', params: { maxTokens: 20 } },
    });
    expect(audits.slice(before)).toContainEqual(
      expect.objectContaining({
        op: 'update',
        id: sampling.id,
        status: 'completed',
        result: expect.objectContaining({ model: 'test-model' }),
      }),
    );
  });

  it('refuses a posted response that answers nothing pending for this client (400), and accepts notifications as before', async () => {
    const init = await fetch(gw.url + ENDPOINT, {
      method: 'POST',
      headers: { ...headers(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: CAPABLE, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    const session = init.headers.get('mcp-session-id')!;
    const post = (body: unknown) =>
      fetch(gw.url + ENDPOINT, {
        method: 'POST',
        headers: {
          ...headers(),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': session,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify(body),
      });
    const forged = await post({ jsonrpc: '2.0', id: 'agentgw-relay-made-up', result: {} });
    expect([forged.status, ((await forged.json()) as { error: { code: number } }).error.code]).toEqual([400, -32600]);
    expect((await post({ jsonrpc: '2.0', id: 7, result: {} })).status).toBe(400);
    expect((await post({ jsonrpc: '2.0', id: 8, result: 'not an object' })).status).toBe(400);
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
  });
});
