import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startMcpServer, type McpFixture } from './index.js';

let fixture: McpFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function connect(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'testkit-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

describe('startMcpServer', () => {
  it('serves its tools to the SDK client and records calls with their headers', async () => {
    fixture = await startMcpServer({
      tools: [
        {
          name: 'add',
          description: 'adds two numbers',
          inputSchema: { a: z.number(), b: z.number() },
          handler: ({ a, b }) => String((a as number) + (b as number)),
        },
        { name: 'ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }], isError: false }) },
      ],
    });
    expect(fixture.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const { client, transport } = await connect(fixture.url, { 'x-end-user-id': 'u-1' });
    expect(transport.sessionId).toBeTruthy();

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['add', 'ping']);
    expect(tools.find((t) => t.name === 'add')?.inputSchema.properties).toHaveProperty('a');

    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(result.content).toEqual([{ type: 'text', text: '5' }]);
    expect(fixture.calls).toHaveLength(1);
    expect(fixture.calls[0]).toMatchObject({ tool: 'add', arguments: { a: 2, b: 3 } });
    expect(fixture.calls[0]?.headers['x-end-user-id']).toBe('u-1');
    expect(fixture.calls[0]?.headers['mcp-session-id']).toBe(transport.sessionId);

    const methods = fixture.requests.map((r) => (r.body as { method?: string } | undefined)?.method);
    expect(methods).toContain('initialize');
    expect(methods).toContain('tools/call');
    await client.close();
  });

  it('rejects requests without the configured bearer or API key', async () => {
    fixture = await startMcpServer({
      tools: [{ name: 'noop', handler: () => 'ok' }],
      auth: { bearer: 's3cret', apiKey: 'k1' },
    });
    await expect(connect(fixture.url, { authorization: 'Bearer wrong', 'x-api-key': 'k1' })).rejects.toThrow();
    await expect(connect(fixture.url, { authorization: 'Bearer s3cret' })).rejects.toThrow();
    const { client } = await connect(fixture.url, { authorization: 'Bearer s3cret', 'x-api-key': 'k1' });
    expect((await client.callTool({ name: 'noop', arguments: {} })).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(fixture.requests.filter((r) => r.headers.authorization === 'Bearer wrong')).toHaveLength(1);
    await client.close();
  });

  it('answers 404 for an unknown session and 400 for a non-initialize first request', async () => {
    fixture = await startMcpServer({ tools: [] });
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const unknown = await fetch(fixture.url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': 'nope' },
      body: JSON.stringify(rpc),
    });
    expect(unknown.status).toBe(404);
    const noSession = await fetch(fixture.url, { method: 'POST', headers, body: JSON.stringify(rpc) });
    expect(noSession.status).toBe(400);
  });

  it('ends a session on DELETE', async () => {
    fixture = await startMcpServer({ tools: [{ name: 'noop', handler: () => 'ok' }] });
    const { client, transport } = await connect(fixture.url);
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const after = await fetch(fixture.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} }),
    });
    expect(after.status).toBe(404);
    await client.close();
  });
});
