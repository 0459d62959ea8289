import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { statelessRpc, type RpcReply } from '../stateless-rpc.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';

// Issue 35.3: help from the calling model, through the real endpoint: how to phrase a query, a weak
// result that says so and offers the providers, and the browse mode (providers, then one's tools).
let gw: GatewayUnderTest;
let tracker: McpFixture;
let chat: McpFixture;
let token: string;

const unified = `/api/v1/mcp/mcp`;
const call = (args: Record<string, unknown>) =>
  statelessRpc(`${gw.url}${unified}`, { authorization: `Bearer ${token}` }, 'tools/call', {
    name: 'search_tools',
    arguments: args,
  });
const answer = (reply: RpcReply) => reply.body.result?.structuredContent as Record<string, unknown>;

beforeAll(async () => {
  tracker = await startMcpServer({
    name: 'tracker',
    tools: [
      { name: 'create_issue', description: 'Open a new issue in the tracker. Needs a title.', handler: () => 'ok' },
      { name: 'list_issues', description: 'List the open issues of the tracker', handler: () => 'ok' },
      { name: 'close_issue', description: 'Close an issue in the tracker', handler: () => 'ok' },
    ],
  });
  chat = await startMcpServer({
    name: 'chat',
    tools: [
      { name: 'post_message', description: 'Post a message to a channel', handler: () => 'ok' },
      { name: 'list_channels', description: 'List the channels of the workspace', handler: () => 'ok' },
    ],
  });
  gw = await startGatewayUnderTest();
  const { catalog, admin } = gw;
  await catalog.providers.create(admin, {
    name: 'tracker',
    pattern: '*',
    endpoint: tracker.url,
    authType: 'none',
    priority: 0,
    description: 'Issue tracking for the product team. Bugs and tasks.',
  });
  await catalog.providers.create(admin, {
    name: 'chat',
    pattern: '*',
    endpoint: chat.url,
    authType: 'none',
    priority: 1,
  });
  token = (await createRuleBoundAgent(gw, { name: 'browsing', toolSurface: 'search' })).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await tracker?.close();
  await chat?.close();
});

describe('search_tools guidance, weak results and browse', () => {
  it("tells the model to phrase a query as an action and its object in the tools' words, and how to browse", async () => {
    const listed = await statelessRpc(`${gw.url}${unified}`, { authorization: `Bearer ${token}` }, 'tools/list');
    const search = (listed.body.result?.tools as { name: string; description: string }[]).find(
      (t) => t.name === 'search_tools',
    )!;
    expect(search.description).toContain('action and its object');
    expect(search.description).toContain('"browse": true');
  });

  it('answers a good match with tools only, and a weak one with a note and the providers as categories', async () => {
    const strong = answer(await call({ query: 'close an issue in the tracker' }));
    expect((strong.tools as { name: string }[])[0]?.name).toBe('close_issue');
    expect(strong).not.toHaveProperty('note');
    const weak = answer(await call({ query: 'order a pizza with extra cheese for the channel' }));
    expect(weak.note).toEqual(expect.stringContaining('Rephrase'));
    expect(weak.categories).toEqual([
      { provider: 'tracker', summary: 'Issue tracking for the product team.', tools: 3 },
      { provider: 'chat', summary: '2 tools: list_channels, post_message', tools: 2 },
    ]);
  });

  it("browses the providers with one-line summaries, then one provider's tools", async () => {
    expect(answer(await call({ browse: true })).providers).toEqual([
      { provider: 'tracker', summary: 'Issue tracking for the product team.', tools: 3 },
      { provider: 'chat', summary: '2 tools: list_channels, post_message', tools: 2 },
    ]);
    expect(answer(await call({ browse: true, provider: 'tracker' }))).toEqual({
      provider: 'tracker',
      tools: [
        { name: 'close_issue', summary: 'Close an issue in the tracker' },
        { name: 'create_issue', summary: 'Open a new issue in the tracker.' },
        { name: 'list_issues', summary: 'List the open issues of the tracker' },
      ],
    });
  });

  it('refuses browse arguments outside the schema with -32602, naming the field', async () => {
    for (const [args, field] of [
      [{ browse: true, provider: 'nope' }, 'provider'],
      [{ provider: 'tracker' }, 'provider'],
      [{ browse: 'yes' }, 'browse'],
      [{ browse: true, query: 'issue' }, 'query'],
    ] as const) {
      const reply = await call(args);
      expect(reply.body.error).toMatchObject({ code: -32602, message: expect.stringContaining(field) });
    }
  });
});
