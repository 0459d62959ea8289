import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { statelessRpc } from '../stateless-rpc.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';

// Issue 35.2 through the real endpoint: the index knows each tool's provider, so a query naming the
// provider finds its tools (whose own text never says it), and the same tool offered by two
// providers comes back once, naming the other copy.
let gw: GatewayUnderTest;
const upstreams: McpFixture[] = [];
let token: string;

interface Hit {
  name: string;
  alsoFrom?: { name: string; provider: string | null }[];
}
const search = async (query: string): Promise<Hit[]> => {
  const reply = await statelessRpc(`${gw.url}/api/v1/mcp/mcp`, { authorization: `Bearer ${token}` }, 'tools/call', {
    name: 'search_tools',
    arguments: { query, limit: 5 },
  });
  return (reply.body.result?.structuredContent as { tools: Hit[] }).tools;
};

beforeAll(async () => {
  gw = await startGatewayUnderTest();
  const pages = [{ name: 'create_page', description: 'Create a page', handler: () => 'ok' }];
  for (const [name, tools, description] of [
    ['notes', pages, null],
    ['wiki', pages, 'The engineering handbook.'],
    [
      'warehouse',
      [
        { name: 'query', description: 'Run a read-only SQL query', handler: () => 'ok' },
        { name: 'list_tables', description: 'List the tables', handler: () => 'ok' },
      ],
      'Analytics data.',
    ],
  ] as const) {
    const upstream = await startMcpServer({ name, tools: [...tools] });
    upstreams.push(upstream);
    await gw.catalog.providers.create(gw.admin, {
      name,
      pattern: '*',
      endpoint: upstream.url,
      authType: 'none',
      priority: upstreams.length,
      description,
    });
  }
  token = (await createRuleBoundAgent(gw, { name: 'searcher', toolSurface: 'search' })).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  for (const upstream of upstreams) await upstream.close();
});

describe("search_tools indexes each tool's provider", () => {
  it("finds a tool by its provider's name and description, which the tool's own text never says", async () => {
    for (const query of ['warehouse', 'analytics'])
      expect((await search(query)).map((h) => h.name).sort()).toEqual(['list_tables', 'query']);
    expect((await search('list the tables in the warehouse'))[0]?.name).toBe('list_tables');
  });

  it('answers the same tool from two providers once, naming the other copy, the named provider first', async () => {
    const hits = await search('create a page in my notes');
    const pagesHits = hits.filter((h) => h.name.endsWith('create_page'));
    expect(pagesHits).toEqual([
      expect.objectContaining({ name: 'notes__create_page', alsoFrom: [{ name: 'create_page', provider: 'wiki' }] }),
    ]);
    expect((await search('create a page in the wiki'))[0]).toMatchObject({
      name: 'create_page',
      alsoFrom: [{ name: 'notes__create_page', provider: 'notes' }],
    });
  });
});
