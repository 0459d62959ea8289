import { startEverything } from '@agentgw/testkit';
import type { ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';

/**
 * Issue 33.5 with real SDKs on both ends: the 2.x SDK client on 2026-07-28 (which answers an
 * input_required result with its own sampling handler and retries) calls server-everything's
 * `trigger-sampling-request` (a 1.x-SDK session server that samples on the call's stream)
 * through the gateway, on both endpoints, and gets the tool's result with its own sampled text.
 */
let gw: GatewayUnderTest;
let everything: { url: string; child: ChildProcess };
let providerId = '';
let token = '';

beforeAll(async () => {
  [everything, gw] = await Promise.all([startEverything(), startGatewayUnderTest()]);
  providerId = (
    await gw.catalog.providers.create(gw.admin, {
      name: 'everything',
      pattern: '*',
      endpoint: everything.url,
      authType: 'none',
      priority: 0,
    })
  ).id;
  token = (await createRuleBoundAgent(gw, { name: 'sampling-bot' })).runtimeToken;
}, 180_000);

afterAll(async () => {
  await gw?.close();
  everything?.child.kill('SIGTERM');
});

/** A 2026-07-28 SDK client declaring sampling (or not) on a gateway path; its handler answers with what it was asked. */
async function modernClient(path: string, sampling: boolean): Promise<Client> {
  const client = new Client(
    { name: 'modern-sampler', version: '1.0.0' },
    { capabilities: sampling ? { sampling: {} } : {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  if (sampling)
    client.setRequestHandler('sampling/createMessage', (request) => {
      const asked = request.params.messages[0]!.content as { text: string };
      return { role: 'assistant', model: 'sdk-model', content: { type: 'text', text: `sampled <${asked.text}>` } };
    });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gw.url + path), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('a 2026-07-28 SDK client answers server-everything’s sampling through the gateway', () => {
  for (const endpoint of ['unified', 'proxy'] as const) {
    const path = () => (endpoint === 'unified' ? '/api/v1/mcp/mcp' : `/api/v1/mcp-proxy/${providerId}/mcp`);

    it(`${endpoint} endpoint: trigger-sampling-request completes with the client's sampled text`, async () => {
      const client = await modernClient(path(), true);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toContain('trigger-sampling-request');
        const result = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello' } });
        expect(result.isError).toBeFalsy();
        expect(textOf(result)).toContain('sampled <Resource trigger-sampling-request context: hello>');
        expect(textOf(result)).toContain('sdk-model');
      } finally {
        await client.close();
      }
    });
  }

  it('a client that declared no sampling is not offered the tool', async () => {
    const client = await modernClient('/api/v1/mcp/mcp', false);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).not.toContain('trigger-sampling-request');
      expect(tools.map((t) => t.name)).toContain('echo');
    } finally {
      await client.close();
    }
  });
});
