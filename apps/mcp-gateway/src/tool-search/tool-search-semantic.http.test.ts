import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { statelessRpc } from '../stateless-rpc.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';

// Issue 35.4 through the real endpoint: with TOOL_SEARCH_EMBEDDINGS_URL set, search_tools fuses an
// embeddings endpoint (here a fake on 127.0.0.1) with the lexical ranking; without it nothing is fetched.
const MEANINGS = [
  ['forget', 'delete', 'deletes', 'remove'],
  ['bob', 'person', 'people', 'entities'],
];
const vectorOf = (text: string) => {
  const words = text.toLowerCase().split(/[^a-z]+/);
  return [...MEANINGS.map((group) => words.filter((w) => group.includes(w)).length), 0.01];
};

let embeddings: Server;
let embeddingsUrl: string;
const embedded: string[][] = [];
let upstream: McpFixture;
const gateways: GatewayUnderTest[] = [];

/** A gateway with one provider and a searching agent, started under the given environment. */
async function gatewayWith(env: Record<string, string>) {
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  try {
    const gw = await startGatewayUnderTest();
    gateways.push(gw);
    await gw.catalog.providers.create(gw.admin, {
      name: 'memory',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'none',
      priority: 0,
    });
    const { runtimeToken } = await createRuleBoundAgent(gw, { name: 'searcher', toolSurface: 'search' });
    return (query: string) =>
      statelessRpc(`${gw.url}/api/v1/mcp/mcp`, { authorization: `Bearer ${runtimeToken}` }, 'tools/call', {
        name: 'search_tools',
        arguments: { query, limit: 3 },
      }).then((reply) =>
        (reply.body.result?.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name),
      );
  } finally {
    for (const [key, value] of Object.entries(saved))
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
  }
}

beforeAll(async () => {
  embeddings = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { input } = JSON.parse(body) as { input: string[] };
      embedded.push(input);
      const data = input.map((text, index) => ({ index, embedding: vectorOf(text) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    });
  });
  await new Promise<void>((ready) => embeddings.listen(0, '127.0.0.1', ready));
  embeddingsUrl = `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}/v1`;
  upstream = await startMcpServer({
    name: 'memory',
    tools: [
      { name: 'delete_entities', description: 'Delete entities from the knowledge graph', handler: () => 'ok' },
      { name: 'read_graph', description: 'Read the entire knowledge graph', handler: () => 'ok' },
      { name: 'create_issue', description: 'Create an issue in a repository', handler: () => 'ok' },
    ],
  });
});

afterAll(async () => {
  for (const gw of gateways) await gw.close();
  await upstream?.close();
  await new Promise<void>((done) => embeddings.close(() => done()));
});

describe('search_tools with an embeddings endpoint configured by environment', () => {
  it('finds by meaning with the endpoint, and fetches nothing without it', async () => {
    const lexical = await gatewayWith({});
    expect(await lexical('forget everything you know about Bob')).not.toContain('delete_entities');
    expect(embedded).toEqual([]);
    const hybrid = await gatewayWith({
      TOOL_SEARCH_EMBEDDINGS_URL: embeddingsUrl,
      TOOL_SEARCH_EMBEDDINGS_MODEL: 'fake',
    });
    expect((await hybrid('forget everything you know about Bob'))[0]).toBe('delete_entities');
    expect(embedded.flat()).toContain('forget everything you know about Bob');
    expect(await hybrid('create an issue')).toEqual(expect.arrayContaining(['create_issue']));
  });
});
