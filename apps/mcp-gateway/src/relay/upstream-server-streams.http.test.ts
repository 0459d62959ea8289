import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ListRootsRequestSchema,
  ListRootsResultSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';

/**
 * What an upstream sends on its own server stream (GET), outside any call: a log notification
 * and a roots/list request. Through the gateway they reach the client's server stream, and the
 * client's roots answer reaches the upstream, on both endpoints. A request asked within a
 * prompts/get goes on that request's answer, switched to SSE.
 */
let gw: GatewayUnderTest;
let upstream: McpFixture;
let token: string;
let providerId: string;

beforeAll(async () => {
  upstream = await startMcpServer({
    name: 'aside',
    tools: [],
    setup: (server) => {
      server.server.registerCapabilities({ logging: {} });
      // Neither names the request it happens in, so both go on the session's server stream.
      server.registerTool('log_aside', { inputSchema: {} }, async () => {
        await server.server.sendLoggingMessage({ level: 'info', logger: 'aside', data: 'said aside' });
        return { content: [{ type: 'text', text: 'logged' }] };
      });
      server.registerTool('roots_aside', { inputSchema: {} }, async () => {
        const { roots } = await server.server.listRoots();
        return { content: [{ type: 'text', text: roots.map((root) => root.uri).join(',') }] };
      });
      // This one asks within its own request: the question goes on the prompts/get answer stream.
      server.registerPrompt('roots_prompt', {}, async (extra) => {
        const { roots } = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
        return {
          messages: [
            { role: 'user', content: { type: 'text', text: roots.map((root: { uri: string }) => root.uri).join(',') } },
          ],
        };
      });
    },
  });
  gw = await startGatewayUnderTest();
  const provider = await gw.catalog.providers.create(gw.admin, {
    name: 'aside',
    pattern: '*',
    endpoint: upstream.url,
    authType: 'none',
    priority: 0,
  });
  providerId = provider.id;
  token = (
    await createRuleBoundAgent(gw, {
      name: 'aside-bot',
      rules: [{ providerId: provider.id, action: 'allow', toolPattern: '*' }],
    })
  ).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

async function connect(path: string) {
  const logs: string[] = [];
  const client = new Client({ name: 'aside-client', version: '1.0.0' }, { capabilities: { roots: {} } });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///aside-root' }] }));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gw.url + path), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return { client, logs };
}

describe.each([
  ['unified', () => '/api/v1/mcp/mcp'],
  ['proxy', () => `/api/v1/mcp-proxy/${providerId}/mcp`],
])("an upstream's own server stream through the %s endpoint", (_name, path) => {
  it('delivers its log notification and relays its roots requests both ways (server stream and a prompts/get answer)', async () => {
    const { client, logs } = await connect(path());
    try {
      // The first call opens the upstream session; the gateway then follows its server stream.
      // Until it does the upstream has nowhere to send, so the log is asked for until it arrives.
      for (let attempt = 0; logs.length === 0 && attempt < 200; attempt++) {
        await client.callTool({ name: 'log_aside', arguments: {} });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(logs).toContain('said aside');
      const roots = await client.callTool({ name: 'roots_aside', arguments: {} });
      expect(roots.content).toEqual([{ type: 'text', text: 'file:///aside-root' }]);
      const prompt = await client.getPrompt({ name: 'roots_prompt' });
      expect(prompt.messages[0]!.content).toEqual({ type: 'text', text: 'file:///aside-root' });
    } finally {
      await client.close();
    }
  });
});
