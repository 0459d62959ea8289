import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseSse, type SseEvent } from '@agentgw/mcp-client';
import { startConformanceServer, type ConformanceServer } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';

/**
 * SEP-1699 through the gateway's own endpoints: the conformance fixture's `test_reconnection`
 * closes its stream after a priming event; the gateway primes and closes the client's answer
 * likewise, and a GET with that Last-Event-ID brings the result. Another session's id is refused.
 */
let gw: GatewayUnderTest;
let upstream: ConformanceServer;
let token: string;
let providerId: string;

beforeAll(async () => {
  upstream = await startConformanceServer();
  gw = await startGatewayUnderTest();
  const provider = await gw.catalog.providers.create(gw.admin, {
    name: 'conformance',
    pattern: '*',
    endpoint: upstream.url,
    authType: 'none',
    priority: 0,
  });
  providerId = provider.id;
  const rules = [
    { providerId: provider.id, action: 'allow' as const, toolPattern: 'test_*' },
    { providerId: provider.id, action: 'deny' as const, toolPattern: 'denied_*' },
  ];
  token = (await createRuleBoundAgent(gw, { name: 'resume-bot', rules })).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** A 2025-11-25 session opened by the SDK client; its id is what the raw requests below use. */
async function session(path: string): Promise<{ sid: string; close: () => Promise<void> }> {
  const client = new Client({ name: 'resume-client', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(gw.url + path), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { sid: transport.sessionId!, close: () => client.close() };
}

const headers = (sid: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${token}`,
  'mcp-session-id': sid,
  'mcp-protocol-version': '2025-11-25',
  ...extra,
});

async function events(response: Response): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const event of parseSse(response.body as unknown as AsyncIterable<Uint8Array>)) out.push(event);
  return out;
}

const callTool = (path: string, sid: string, name: string) =>
  fetch(gw.url + path, {
    method: 'POST',
    headers: headers(sid, { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
  });

const resume = (path: string, sid: string, lastEventId: string) =>
  fetch(gw.url + path, { headers: headers(sid, { accept: 'text/event-stream', 'last-event-id': lastEventId }) });

describe.each([
  ['unified', () => '/api/v1/mcp/mcp'],
  ['proxy', () => `/api/v1/mcp-proxy/${providerId}/mcp`],
])('SEP-1699 resumption on the %s endpoint', (_name, pathOf) => {
  it('primes and closes the answer when the upstream does; the GET with Last-Event-ID brings the result', async () => {
    const path = pathOf();
    const { sid, close } = await session(path);
    const answer = await callTool(path, sid, 'test_reconnection');
    expect(answer.headers.get('content-type')).toContain('text/event-stream');
    const posted = await events(answer);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.data).toBe('');
    expect(posted[0]!.retry).toBeGreaterThanOrEqual(0);
    expect(posted[0]!.id).toMatch(/^r\.[A-Za-z0-9_-]{22}\.0$/);

    const resumed = await resume(path, sid, posted[0]!.id!);
    expect(resumed.status).toBe(200);
    const replayed = await events(resumed);
    const result = JSON.parse(replayed.at(-1)!.data) as { id: number; result: { content: { text: string }[] } };
    expect(result.id).toBe(1);
    expect(result.result.content[0]!.text).toBe('Reconnection test completed successfully');
    expect(replayed.at(-1)!.id).toMatch(/^r\./);
    await close();
  });

  it("refuses another session's event id, and a forged one, with 404", async () => {
    const path = pathOf();
    const victim = await session(path);
    const attacker = await session(path);
    const posted = await events(await callTool(path, victim.sid, 'test_reconnection'));
    const stolen = posted[0]!.id!;
    expect((await resume(path, attacker.sid, stolen)).status).toBe(404);
    expect((await resume(path, victim.sid, 'r.AAAAAAAAAAAAAAAAAAAAAA.0')).status).toBe(404);
    // The owner still resumes it.
    const replayed = await events(await resume(path, victim.sid, stolen));
    expect(replayed.at(-1)!.data).toContain('Reconnection test completed successfully');
    await victim.close();
    await attacker.close();
  });

  it('keeps a plain call JSON and a denied call a 403 JSON answer', async () => {
    const path = pathOf();
    const { sid, close } = await session(path);
    const plain = await callTool(path, sid, 'test_simple_text');
    expect(plain.headers.get('content-type')).toContain('application/json');
    const denied = await callTool(path, sid, 'denied_tool');
    expect(denied.headers.get('content-type')).toContain('application/json');
    // The proxy's deny rule is a 403; the unified endpoint exposes no such name (no provider offers it): -32602 Unknown tool.
    if (path.includes('mcp-proxy')) expect(denied.status).toBe(403);
    else
      expect(await denied.json()).toMatchObject({
        id: 1,
        error: { code: -32602, message: 'Unknown tool: denied_tool' },
      });
    await close();
  });
});
