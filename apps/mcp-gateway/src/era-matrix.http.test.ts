import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMcpServer, startMcpV2Server, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { statelessRpc } from './stateless-rpc.js';

// The mixed-era matrix (issue 21.5): a 2025-11-25 client (SDK 1.x) and a 2026-07-28 client
// (SDK 2.x) × a 2026-07-28-only upstream, a session-only upstream and a dual-era upstream ×
// both endpoints: every upstream tool is listed and callable in every cell, and a dual-era
// upstream is spoken to in the client's own era.
let gw: GatewayUnderTest;
let runtimeToken: string;
const upstreams: Record<'modern' | 'legacy' | 'dual', { fixture: McpFixture; tool: string; providerId: string }> =
  {} as never;

type Era = 'legacy' | 'modern';
interface Connected {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

async function connect(era: Era, path: string): Promise<Connected> {
  const url = new URL(gw.url + path);
  const requestInit = { headers: { authorization: `Bearer ${runtimeToken}` } };
  if (era === 'legacy') {
    const client = new ClientV1({ name: 'matrix-legacy', version: '1' });
    await client.connect(new TransportV1(url, { requestInit }));
    return client;
  }
  const client = new ClientV2(
    { name: 'matrix-modern', version: '2' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new TransportV2(url, { requestInit }));
  return client;
}

beforeAll(async () => {
  const fixtures = {
    modern: await startMcpV2Server({ name: 'modern-only', tools: [{ name: 'm_echo', handler: () => 'from modern' }] }),
    legacy: await startMcpServer({ name: 'legacy-only', tools: [{ name: 'l_echo', handler: () => 'from legacy' }] }),
    dual: await startMcpV2Server({
      name: 'dual',
      legacy: 'stateless',
      tools: [{ name: 'd_echo', handler: () => 'from dual' }],
    }),
  };
  gw = await startGatewayUnderTest();
  const { catalog, admin } = gw;
  for (const [kind, fixture] of Object.entries(fixtures) as [keyof typeof fixtures, McpFixture][]) {
    const prefix = kind[0]!;
    const provider = await catalog.providers.create(admin, {
      name: kind,
      pattern: `${prefix}_*`,
      endpoint: fixture.url,
      authType: 'none',
      priority: 0,
    });
    upstreams[kind] = { fixture, tool: `${prefix}_echo`, providerId: provider.id };
  }
  const created = await catalog.agents.create(admin, { name: 'matrix', upstreamUrl: 'http://127.0.0.1:9/agent' });
  runtimeToken = created.runtimeToken;
  await catalog.rules.create(admin, {
    subjectType: 'agent',
    subjectId: created.agent.id,
    providerId: '*',
    action: 'allow',
    toolPattern: '*',
  });
});

afterAll(async () => {
  await gw?.close();
  for (const u of Object.values(upstreams)) await u.fixture.close();
});

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('mixed-era matrix', () => {
  for (const era of ['legacy', 'modern'] as const) {
    it(`${era} client, unified endpoint: every upstream's tool listed and callable`, async () => {
      const client = await connect(era, '/api/v1/mcp/mcp');
      const listed = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(listed).toEqual(['d_echo', 'l_echo', 'm_echo']);
      for (const [kind, u] of Object.entries(upstreams)) {
        expect(text(await client.callTool({ name: u.tool, arguments: {} })), `${era} → ${kind}`).toBe(`from ${kind}`);
      }
      await client.close();
    });

    for (const kind of ['modern', 'legacy', 'dual'] as const) {
      it(`${era} client, proxy of the ${kind} upstream: its tool listed and callable`, async () => {
        const u = upstreams[kind];
        const client = await connect(era, `/api/v1/mcp-proxy/${u.providerId}/mcp`);
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual([u.tool]);
        expect(text(await client.callTool({ name: u.tool, arguments: {} }))).toBe(`from ${kind}`);
        await client.close();
      });
    }
  }

  it('speaks to a dual-era upstream in the client’s era: a legacy client’s calls go as 2025-11-25, a modern client’s as 2026-07-28', async () => {
    const dual = upstreams.dual.fixture;
    const versionsOfCalls = (from: number) =>
      dual.requests
        .slice(from)
        .filter((r) => (r.body as { method?: string } | undefined)?.method === 'tools/call')
        .map((r) => r.headers['mcp-protocol-version']);
    for (const [era, version] of [
      ['legacy', '2025-11-25'],
      ['modern', '2026-07-28'],
    ] as const) {
      const before = dual.requests.length;
      const client = await connect(era, '/api/v1/mcp/mcp');
      await client.callTool({ name: 'd_echo', arguments: {} });
      expect(versionsOfCalls(before)).toEqual([version]);
      await client.close();
    }
  });

  it('never drops an upstream silently: one whose list cannot be had is named in the merged list’s _meta', async () => {
    const dead = await gw.catalog.providers.create(gw.admin, {
      name: 'dead',
      pattern: 'x_*',
      endpoint: 'http://127.0.0.1:9/mcp',
      authType: 'none',
      priority: 0,
    });
    const reply = await statelessRpc(
      `${gw.url}/api/v1/mcp/mcp`,
      { authorization: `Bearer ${runtimeToken}` },
      'tools/list',
    );
    expect((reply.body.result!.tools as { name: string }[]).map((t) => t.name).sort()).toEqual([
      'd_echo',
      'l_echo',
      'm_echo',
    ]);
    expect(reply.body.result!._meta).toMatchObject({
      'agentgw/leftOut': [{ providerId: dead.id, name: 'dead', reason: expect.any(String) }],
    });
    await gw.catalog.providers.delete(gw.admin, dead.id);
  });
});
