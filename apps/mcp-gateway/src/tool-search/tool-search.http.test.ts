import type { ConfirmationGate, HeldCall, HoldOutcome } from '@agentgw/core';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { statelessRpc, toolNames, type RpcReply } from '../stateless-rpc.js';
import { recordingAuditTrail, type RecordedAudit } from '../testing/recorded-audits.js';
import { createRuleBoundAgent, type AgentRule } from '../testing/rule-bound-agents.js';

// Issue 24.2: the search surface through the real endpoint, on both protocol eras.
let gw: GatewayUnderTest;
let upstream: McpFixture;
let searchAgentToken: string;
let listAgentToken: string;
const audits: RecordedAudit[] = [];
const held: { call: HeldCall; decide: (outcome: HoldOutcome) => void }[] = [];

const gate: ConfirmationGate = {
  hold: (call) => new Promise((decide) => held.push({ call, decide })),
  redeem: async () => false,
};

const unified = (query = '') => `${gw.url}/api/v1/mcp/mcp${query}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const structured = (reply: RpcReply) =>
  (reply.body.result?.structuredContent as { tools: { name: string; held?: boolean; inputSchema: unknown }[] }).tools;
const search = (token: string, query: string, url = unified(), limit?: number) =>
  statelessRpc(url, bearer(token), 'tools/call', {
    name: 'search_tools',
    arguments: { query, ...(limit === undefined ? {} : { limit }) },
  });

beforeAll(async () => {
  upstream = await startMcpServer({
    name: 'tracker',
    tools: [
      {
        name: 'create_issue',
        description: 'Open a new issue in the tracker',
        inputSchema: { title: z.string() },
        handler: () => 'issue opened',
      },
      { name: 'list_issues', description: 'List the open issues of the tracker', handler: () => 'issues' },
      { name: 'delete_issue', description: 'Delete an issue from the tracker for good', handler: () => 'deleted' },
      { name: 'close_issue', description: 'Close an issue in the tracker', handler: () => 'closed' },
    ],
  });
  gw = await startGatewayUnderTest({ gate, audit: () => recordingAuditTrail(audits) });
  const { catalog, admin } = gw;
  const provider = await catalog.providers.create(admin, {
    name: 'tracker',
    pattern: '*',
    endpoint: upstream.url,
    authType: 'none',
    priority: 0,
  });
  const rules: AgentRule[] = [
    { providerId: provider.id, action: 'allow', toolPattern: '*' },
    { providerId: provider.id, action: 'deny', toolPattern: 'delete_*' },
    { providerId: provider.id, action: 'require_confirmation', toolPattern: 'close_issue' },
  ];
  searchAgentToken = (await createRuleBoundAgent(gw, { name: 'searching', toolSurface: 'search', rules })).runtimeToken;
  listAgentToken = (await createRuleBoundAgent(gw, { name: 'listing', rules })).runtimeToken;
});

afterAll(async () => {
  for (const h of held) h.decide({ decision: 'rejected', confirmationId: 'c', reason: 'test over' });
  await gw?.close();
  await upstream?.close();
});

beforeEach(() => {
  upstream.calls.length = 0;
});

describe('tool search surface (2026-07-28, stateless)', () => {
  it('lists only the meta-tools for an agent set to search, and the whole list otherwise; ?tools= overrides the setting', async () => {
    expect(toolNames(await statelessRpc(unified(), bearer(searchAgentToken), 'tools/list'))).toEqual([
      'call_tool',
      'search_tools',
    ]);
    expect(toolNames(await statelessRpc(unified(), bearer(listAgentToken), 'tools/list'))).toEqual([
      'close_issue',
      'create_issue',
      'list_issues',
    ]);
    expect(toolNames(await statelessRpc(unified('?tools=search'), bearer(listAgentToken), 'tools/list'))).toEqual([
      'call_tool',
      'search_tools',
    ]);
    expect(toolNames(await statelessRpc(unified('?tools=all'), bearer(searchAgentToken), 'tools/list'))).toEqual([
      'close_issue',
      'create_issue',
      'list_issues',
    ]);
  });

  it('refuses an unknown ?tools= value with -32602', async () => {
    const reply = await statelessRpc(unified('?tools=everything'), bearer(listAgentToken), 'tools/list');
    expect(reply.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('all, search') });
  });

  it('ranks only tools the caller may call: a denied tool never appears, a held one is marked', async () => {
    const hits = structured(await search(searchAgentToken, 'remove an issue from the tracker', unified(), 20));
    expect(hits.map((t) => t.name)).not.toContain('delete_issue');
    expect(hits.map((t) => t.name).sort()).toEqual(['close_issue', 'create_issue', 'list_issues']);
    expect(hits.find((t) => t.name === 'close_issue')?.held).toBe(true);
    expect(hits.find((t) => t.name === 'create_issue')?.held).toBeUndefined();
    const top = structured(await search(searchAgentToken, 'open a new ticket'))[0]!;
    expect(top).toMatchObject({ name: 'create_issue', inputSchema: { properties: { title: { type: 'string' } } } });
  });

  it('refuses search_tools arguments outside its schema', async () => {
    const tooMany = await search(searchAgentToken, 'issue', unified(), 21);
    expect(tooMany.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('limit') });
    const noQuery = await statelessRpc(unified(), bearer(searchAgentToken), 'tools/call', {
      name: 'search_tools',
      arguments: {},
    });
    expect(noQuery.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('query') });
  });

  it('call_tool takes the normal path: forwarded and audited under the real tool name', async () => {
    const reply = await statelessRpc(unified(), bearer(searchAgentToken), 'tools/call', {
      name: 'call_tool',
      arguments: { name: 'create_issue', arguments: { title: 'x' } },
    });
    expect(reply.body.result).toMatchObject({ content: [{ text: 'issue opened' }] });
    expect(upstream.calls).toEqual([expect.objectContaining({ tool: 'create_issue', arguments: { title: 'x' } })]);
    expect(audits.filter((a) => a.entry?.toolName === 'call_tool')).toEqual([]);
    expect(audits.some((a) => a.entry?.toolName === 'create_issue')).toBe(true);
  });

  it('call_tool of a denied tool is denied and audited under the real name, never forwarded', async () => {
    const reply = await statelessRpc(unified(), bearer(searchAgentToken), 'tools/call', {
      name: 'call_tool',
      arguments: { name: 'delete_issue', arguments: {} },
    });
    expect(reply.status).toBe(403);
    expect(reply.body.error).toMatchObject({ code: -32003, data: { decision: 'denied' } });
    const auditId = reply.body.error!.data!.auditId as string;
    expect(audits.find((a) => a.id === auditId)?.entry).toMatchObject({ toolName: 'delete_issue', status: 'rejected' });
    expect(upstream.calls).toEqual([]);
  });

  it('call_tool of a held tool is held for confirmation under the real name', async () => {
    const before = held.length;
    const answer = statelessRpc(unified(), bearer(searchAgentToken), 'tools/call', {
      name: 'call_tool',
      arguments: { name: 'close_issue', arguments: {} },
    });
    await expect.poll(() => held.length).toBe(before + 1);
    expect(held.at(-1)!.call).toMatchObject({ toolName: 'close_issue' });
    expect(upstream.calls).toEqual([]);
    held.at(-1)!.decide({ decision: 'rejected', confirmationId: 'c1', reason: 'not now' });
    expect((await answer).body.error).toMatchObject({ code: -32004, data: { decision: 'rejected' } });
    expect(upstream.calls).toEqual([]);
  });

  it('leaves a direct tools/call of a real tool on the normal path', async () => {
    const reply = await statelessRpc(unified('?tools=search'), bearer(listAgentToken), 'tools/call', {
      name: 'list_issues',
      arguments: {},
    });
    expect(reply.body.result).toMatchObject({ content: [{ text: 'issues' }] });
  });
});

describe('tool search surface (2025-11-25 session, SDK 1.x client)', () => {
  it('lists the meta-tools, searches and calls through them', async () => {
    const client = new ClientV1({ name: 'search-test', version: '1.0.0' });
    await client.connect(
      new TransportV1(new URL(unified('?tools=search')), { requestInit: { headers: bearer(listAgentToken) } }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['call_tool', 'search_tools']);
      const found = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'list the issues of the tracker', limit: 2 },
      });
      expect((found.structuredContent as { tools: { name: string }[] }).tools[0]?.name).toBe('list_issues');
      const called = await client.callTool({ name: 'call_tool', arguments: { name: 'list_issues', arguments: {} } });
      expect(called.content).toEqual([{ type: 'text', text: 'issues' }]);
    } finally {
      await client.close();
    }
  });
});
