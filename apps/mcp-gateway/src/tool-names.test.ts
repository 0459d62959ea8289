import {
  replyJson,
  startMcpServer,
  startRecordingUpstream,
  type McpFixture,
  type RecordingUpstream,
} from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { ALLOW_EVERY_TOOL, createRuleBoundAgent } from './testing/rule-bound-agents.js';
import { statelessRpc } from './stateless-rpc.js';

// Rules match tool names exactly. A name that differs from a denied one only by case, spaces or
// hidden characters must never reach an upstream, which may match names more loosely.
let gw: GatewayUnderTest;
let upstream: McpFixture;
let unlisting: RecordingUpstream;
let ids: { ops: string; unlisting: string };
let runtimeToken: string;

const bearer = () => ({ authorization: `Bearer ${runtimeToken}` });
const unified = () => `${gw.url}/api/v1/mcp/mcp`;
const proxy = (id: string) => `${gw.url}/api/v1/mcp-proxy/${id}/mcp`;
const call = (url: string, name: string) => statelessRpc(url, bearer(), 'tools/call', { name, arguments: {} });
/** JSON-RPC methods the fixture received, in order. */
const methodsSeen = () =>
  upstream.requests.map((r) => (r.body as { method?: string } | undefined)?.method).filter(Boolean);

beforeAll(async () => {
  upstream = await startMcpServer({
    name: 'ops',
    tools: [
      { name: 'delete_all', handler: () => 'deleted everything' },
      { name: 'read_file', handler: () => 'read' },
    ],
  });
  // An MCP upstream that serves calls but cannot list its tools.
  unlisting = await startRecordingUpstream((req, res) => {
    const body = req.body as { id?: number; method?: string };
    if (body?.id === undefined) return void res.writeHead(202).end();
    if (body.method === 'initialize') {
      return replyJson(res, 200, {
        jsonrpc: '2.0',
        id: body.id,
        result: {
          protocolVersion: '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'unlisting', version: '1' },
        },
      });
    }
    if (body.method === 'tools/call')
      return replyJson(res, 200, {
        jsonrpc: '2.0',
        id: body.id,
        result: { content: [{ type: 'text', text: 'ran unchecked' }] },
      });
    return replyJson(res, 200, { jsonrpc: '2.0', id: body.id, error: { code: -32603, message: 'listing is broken' } });
  });
  gw = await startGatewayUnderTest();
  const { catalog, admin } = gw;
  const ops = await catalog.providers.create(admin, {
    name: 'ops',
    pattern: '*',
    endpoint: upstream.url,
    authType: 'none',
    priority: 0,
  });
  const broken = await catalog.providers.create(admin, {
    name: 'unlisting',
    pattern: 'nolist_*',
    endpoint: unlisting.url,
    authType: 'none',
    priority: 0,
  });
  ids = { ops: ops.id, unlisting: broken.id };
  runtimeToken = (
    await createRuleBoundAgent(gw, {
      rules: [ALLOW_EVERY_TOOL, { providerId: ops.id, action: 'deny', toolPattern: 'delete_all' }],
    })
  ).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await unlisting?.close();
});

describe('tool names', () => {
  it('refuses names with control or invisible characters or surrounding whitespace outright (-32602), on both endpoints', async () => {
    for (const name of [
      ' delete_all',
      'delete_all ',
      'delete_all\n',
      'delete\u0000_all',
      'delete\u200b_all',
      '\u202edelete_all',
      'delete_all\t',
    ]) {
      for (const url of [unified(), proxy(ids.ops)]) {
        const reply = await call(url, name);
        expect(reply.status, JSON.stringify(name)).toBe(200);
        expect(reply.body.error).toMatchObject({
          code: -32602,
          message: expect.stringMatching(/control characters|whitespace/),
        });
      }
    }
    expect(upstream.calls).toEqual([]);
  });

  it('forwards only names the routed provider listed: a case variant of a denied tool is an unknown tool', async () => {
    for (const url of [unified(), proxy(ids.ops)]) {
      expect((await call(url, 'Delete_All')).body.error).toMatchObject({
        code: -32602,
        message: 'Unknown tool: Delete_All',
      });
      expect((await call(url, 'DELETE_ALL')).body.error).toMatchObject({
        code: -32602,
        message: 'Unknown tool: DELETE_ALL',
      });
      expect((await call(url, 'delete_all')).status).toBe(403);
      expect((await call(url, 'read_file')).body.result).toMatchObject({ content: [{ text: 'read' }] });
    }
    expect(upstream.calls.map((c) => c.tool)).toEqual(['read_file', 'read_file']);
  });

  it('adds no upstream round trip to a plain tools/call once the list is cached', async () => {
    await call(unified(), 'read_file');
    const lists = methodsSeen().filter((m) => m === 'tools/list').length;
    for (let i = 0; i < 5; i++) expect((await call(unified(), 'read_file')).body.result).toBeDefined();
    expect(methodsSeen().filter((m) => m === 'tools/list').length).toBe(lists);
    // A made-up name within the refetch window costs no list either.
    await call(unified(), 'made_up');
    expect(methodsSeen().filter((m) => m === 'tools/list').length).toBe(lists);
  });

  it('does not call a provider unchecked when its tool list cannot be had (502)', async () => {
    const reply = await call(unified(), 'nolist_run');
    expect(reply.status).toBe(502);
    expect(reply.body.error).toMatchObject({
      code: -32010,
      message: 'The provider did not list its tools, so the call cannot be checked',
    });
    expect(unlisting.requests.some((r) => (r.body as { method?: string } | undefined)?.method === 'tools/call')).toBe(
      false,
    );
  });

  it('refuses such names on the tool gate with a 400', async () => {
    for (const toolName of [' delete_all', 'delete_all\u0000', 'del\u200bete_all']) {
      const res = await fetch(`${gw.url}/api/v1/tool-gate/evaluate`, {
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/json' },
        body: JSON.stringify({ toolName, providerId: ids.ops }),
      });
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toMatch(/control characters|whitespace/);
    }
  });
});
