import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

// Issue 33.4: the MCP Inspector sends logging/setLevel right after initialize; through the proxy
// of an upstream without logging (server-memory, or this fixture) it was answered -32601 and the
// Inspector gave up. The gateway owns the log level: both endpoints answer it alike.
let gw: GatewayUnderTest;
let upstream: McpFixture;
let providerId: string;

beforeAll(async () => {
  // The fixture declares tools only: no logging capability, so it refuses logging/setLevel.
  upstream = await startMcpServer({ name: 'quiet', tools: [{ name: 'echo', handler: () => 'ok' }] });
  gw = await startGatewayUnderTest();
  providerId = (
    await gw.catalog.providers.create(gw.admin, {
      name: 'quiet',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'none',
      priority: 0,
    })
  ).id;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** How many logging/setLevel requests reached the upstream. */
const setLevelsSeen = () =>
  upstream.requests.filter((r) => JSON.stringify(r.body ?? null).includes('logging/setLevel')).length;

/** An SDK 1.x client (a session revision, as the Inspector) connected to one of the gateway's MCP endpoints. */
async function connected(path: string): Promise<Client> {
  const client = new Client({ name: 'inspector-like', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${gw.adminToken}` } },
    }),
  );
  return client;
}

describe('logging/setLevel is the gateway’s on both endpoints', () => {
  it('answers {} through the proxy of an upstream without logging, as on the unified endpoint', async () => {
    for (const path of [`/api/v1/mcp-proxy/${providerId}/mcp`, '/api/v1/mcp/mcp']) {
      const client = await connected(path);
      try {
        expect(client.getServerCapabilities()?.logging).toEqual({});
        const asked = setLevelsSeen();
        expect(await client.setLoggingLevel('debug')).toEqual({});
        // The upstream was still asked (an upstream with logging takes the level); its refusal stays behind the gateway.
        expect(setLevelsSeen()).toBe(asked + 1);
        // A malformed level is still refused, before any upstream is asked.
        await expect(
          client.request({ method: 'logging/setLevel', params: { level: 'loud' } }, z.object({})),
        ).rejects.toThrow(/params.level/);
      } finally {
        await client.close();
      }
    }
  });
});
