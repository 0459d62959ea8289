import { createAuditTrail, type AuditPatch } from '@agentgw/audit';
import type { ConfirmationGate, HeldCall } from '@agentgw/core';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateApiKey } from '@agentgw/auth';
import { createUser, startMcpServer, startMcpV2Server, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { NO_CONFIRMATION_HUB } from './refusing-confirmation-gate.js';
import { recordingRealAuditTrail, type RecordedAuditWrite } from './testing/recorded-audits.js';

let gw: GatewayUnderTest;
let alpha: McpFixture;
let beta: McpFixture;
let ids: { alpha: string; beta: string; dead: string; agent: string };
let runtimeToken: string;
/** What the gateway asked the audit trail to record (the real trail enqueues it too). */
const audits: RecordedAuditWrite[] = [];
const held: HeldCall[] = [];
let gateAnswer: 'confirmed' | 'rejected' | 'timeout' = 'confirmed';

/** A fake confirmation hub: answers at once as the test says, and reports a status while "held". */
const gate: ConfirmationGate = {
  async hold(call, { onStatus }) {
    held.push(call);
    onStatus?.({ confirmationId: 'c1', message: 'waiting for a human', elapsedMs: 5 });
    if (gateAnswer === 'confirmed') return { decision: 'confirmed', confirmationId: 'c1', confirmedBy: 'boss' };
    if (gateAnswer === 'timeout') return { decision: 'timeout', confirmationId: 'c1', reason: 'Request timed out' };
    return { decision: 'rejected', confirmationId: 'c1', reason: 'not today' };
  },
  redeem: async (token) => token === 'good-token',
};

beforeAll(async () => {
  alpha = await startMcpServer({
    name: 'alpha',
    auth: { bearer: 'alpha-secret' },
    tools: [
      {
        name: 'echo',
        inputSchema: { a: z.number().optional(), m: z.boolean().optional() },
        handler: (args) => `alpha:${JSON.stringify(args)}`,
      },
      { name: 'fails', handler: () => ({ content: [{ type: 'text', text: 'broken' }], isError: true }) },
      { name: 'secret', handler: () => 'should never run' },
      { name: 'shared', handler: () => 'alpha shared' },
      { name: 'risky', handler: () => 'risky done' },
      {
        name: 'structured',
        handler: () => ({ content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } }),
      },
      {
        name: 'slow',
        handler: async (_a, call) => {
          await call.sendProgress?.(1, 2);
          return 'slow done';
        },
      },
    ],
    setup: (server) => {
      server.registerResource('readme', 'file:///readme', { mimeType: 'text/plain' }, async () => ({
        contents: [{ uri: 'file:///readme', text: 'hello resource' }],
      }));
      server.registerPrompt('greet', { description: 'greets' }, () => ({
        messages: [{ role: 'user', content: { type: 'text', text: 'hi there' } }],
      }));
    },
  });
  beta = await startMcpV2Server({
    name: 'beta',
    auth: { apiKey: 'beta-key' },
    tools: [
      { name: 'beta_echo', handler: (args) => `beta:${JSON.stringify(args)}` },
      { name: 'shared', handler: () => 'beta shared' },
    ],
  });
  gw = await startGatewayUnderTest({ gate, audit: recordingRealAuditTrail(audits) });
  const { catalog, admin } = gw;
  const a = await catalog.providers.create(admin, {
    name: 'alpha',
    pattern: '*',
    endpoint: alpha.url,
    authType: 'bearer',
    authSecret: 'alpha-secret',
    priority: 0,
  });
  const b = await catalog.providers.create(admin, {
    name: 'beta',
    pattern: 'beta_*',
    endpoint: beta.url,
    authType: 'api_key',
    authSecret: 'beta-key',
    priority: 10,
  });
  const d = await catalog.providers.create(admin, {
    name: 'dead',
    pattern: 'dead_*',
    endpoint: 'http://127.0.0.1:9/mcp',
    authType: 'none',
    priority: 5,
  });
  const created = await catalog.agents.create(admin, { name: 'bot', upstreamUrl: 'http://127.0.0.1:9/agent' });
  runtimeToken = created.runtimeToken;
  ids = { alpha: a.id, beta: b.id, dead: d.id, agent: created.agent.id };
  const rule = (providerId: string, action: 'allow' | 'deny' | 'require_confirmation', toolPattern = '*') =>
    catalog.rules.create(admin, { subjectType: 'agent', subjectId: ids.agent, providerId, action, toolPattern });
  await rule('*', 'allow');
  await rule(ids.alpha, 'deny', 'secret');
  await rule(ids.alpha, 'require_confirmation', 'risky');
});

afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await beta?.close();
});

const bearer = () => ({ authorization: `Bearer ${runtimeToken}` });

async function legacyClient(path = '/api/v1/mcp/mcp') {
  const client = new ClientV1({ name: 'legacy-test', version: '1.0.0' });
  const transport = new TransportV1(new URL(gw.url + path), { requestInit: { headers: bearer() } });
  await client.connect(transport);
  return { client, transport };
}

async function modernClient(path = '/api/v1/mcp/mcp', on = { url: gw.url, headers: bearer() }) {
  const client = new ClientV2(
    { name: 'modern-test', version: '2.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new TransportV2(new URL(on.url + path), { requestInit: { headers: on.headers } }));
  return client;
}

const names = (tools: { name: string }[]) => tools.map((t) => t.name).sort();
const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('unified endpoint with the 1.x SDK client (session revisions)', () => {
  it('lists the merged tools: denied removed, require_confirmation kept, each name once from its route, the dead upstream left out', async () => {
    const { client } = await legacyClient();
    const { tools } = await client.listTools();
    expect(names(tools)).toEqual(['beta_echo', 'echo', 'fails', 'risky', 'shared', 'slow', 'structured']);
    await client.close();
  });

  it('calls a tool with the provider auth and identity headers, and returns results unchanged (isError too)', async () => {
    const { client } = await legacyClient();
    expect(textOf(await client.callTool({ name: 'echo', arguments: { a: 1 } }))).toBe('alpha:{"a":1}');
    const headers = alpha.calls.at(-1)!.headers;
    expect(headers.authorization).toBe('Bearer alpha-secret');
    expect(headers['x-gateway-agent-id']).toBe(ids.agent);
    expect(headers['x-gateway-request-id']).toMatch(/^req_/);
    expect(await client.callTool({ name: 'fails', arguments: {} })).toMatchObject({
      isError: true,
      content: [{ text: 'broken' }],
    });
    expect(await client.callTool({ name: 'structured', arguments: {} })).toMatchObject({ structuredContent: { n: 1 } });
    expect(textOf(await client.callTool({ name: 'beta_echo', arguments: { b: 2 } }))).toBe('beta:{"b":2}');
    expect(beta.calls.at(-1)!.headers['x-api-key']).toBe('beta-key');
    await client.close();
  });

  it('denies a tool by rule with HTTP 403 and a reason, and audits it as rejected', async () => {
    const { client } = await legacyClient();
    await expect(client.callTool({ name: 'secret', arguments: {} })).rejects.toMatchObject({
      code: 403,
      message: expect.stringMatching(/Denied by an access rule/),
    });
    expect(alpha.calls.some((c) => c.tool === 'secret')).toBe(false);
    await expect
      .poll(() => audits.some((j) => j.op === 'create' && j.toolName === 'secret' && j.status === 'rejected'))
      .toBe(true);
    await client.close();
  });

  it('holds require_confirmation calls: confirmed → forwarded, rejected → error with the reason', async () => {
    const { client } = await legacyClient();
    gateAnswer = 'confirmed';
    expect(textOf(await client.callTool({ name: 'risky', arguments: {} }))).toBe('risky done');
    expect(held.at(-1)).toMatchObject({ toolName: 'risky', providerId: ids.alpha, agentId: ids.agent });
    gateAnswer = 'rejected';
    await expect(client.callTool({ name: 'risky', arguments: {} })).rejects.toThrow(/not today/);
    // How the confirmation ended is the hub's to record (the fake gate stands in for it): the waiting call never writes it again.
    expect(audits.filter((j) => j.op === 'update' && (j.confirmedBy === 'boss' || j.error === 'not today'))).toEqual(
      [],
    );
    await client.close();
  });

  it('honours providers= and only routes to the providers named', async () => {
    const client = new ClientV1({ name: 't', version: '1' });
    await client.connect(
      new TransportV1(new URL(`${gw.url}/api/v1/mcp/mcp?providers=${ids.beta}`), {
        requestInit: { headers: bearer() },
      }),
    );
    expect(names((await client.listTools()).tools)).toEqual(['beta_echo']);
    await expect(client.callTool({ name: 'echo', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await client.close();
  });

  it('merges resources and prompts of the providers', async () => {
    const { client } = await legacyClient();
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['file:///readme']);
    expect(await client.readResource({ uri: 'file:///readme' })).toMatchObject({
      contents: [{ text: 'hello resource' }],
    });
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greet']);
    expect(await client.getPrompt({ name: 'greet' })).toMatchObject({ messages: [{ content: { text: 'hi there' } }] });
    await client.close();
  });

  it('DELETE ends the session and the upstream sessions it opened; the id is then unknown', async () => {
    const { client, transport } = await legacyClient();
    await client.callTool({ name: 'echo', arguments: {} });
    const sessionId = transport.sessionId!;
    const deletesBefore = alpha.requests.filter((r) => r.method === 'DELETE').length;
    await transport.terminateSession();
    expect(alpha.requests.filter((r) => r.method === 'DELETE').length).toBe(deletesBefore + 1);
    const after = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
      method: 'POST',
      headers: {
        ...bearer(),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
    await client.close();
  });
});

describe('unified endpoint with the 2.x SDK client (2026-07-28, stateless)', () => {
  it('lists, calls, is denied with 403, and sees the same tools as a legacy client', async () => {
    const client = await modernClient();
    expect(names((await client.listTools()).tools)).toEqual([
      'beta_echo',
      'echo',
      'fails',
      'risky',
      'shared',
      'slow',
      'structured',
    ]);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { m: true } }))).toBe('alpha:{"m":true}');
    expect(textOf(await client.callTool({ name: 'beta_echo', arguments: {} }))).toBe('beta:{}');
    await expect(client.callTool({ name: 'secret', arguments: {} })).rejects.toThrow(/403|Denied/);
    await client.close();
  });
});

describe('per-provider proxy', () => {
  it('lists the provider’s tools minus denied ones and forwards other methods unchanged', async () => {
    const { client } = await legacyClient(`/api/v1/mcp-proxy/${ids.alpha}/mcp`);
    expect(names((await client.listTools()).tools)).toEqual(['echo', 'fails', 'risky', 'shared', 'slow', 'structured']);
    expect(textOf(await client.callTool({ name: 'shared', arguments: {} }))).toBe('alpha shared');
    expect(await client.readResource({ uri: 'file:///readme' })).toMatchObject({
      contents: [{ text: 'hello resource' }],
    });
    await client.ping();
    await client.close();
    const modern = await modernClient(`/api/v1/mcp-proxy/${ids.beta}/mcp`);
    expect(textOf(await modern.callTool({ name: 'beta_echo', arguments: {} }))).toBe('beta:{}');
    // beta's pattern is beta_*: its `shared` is no more beta's through the proxy than through routing.
    await expect(modern.callTool({ name: 'shared', arguments: {} })).rejects.toThrow(/outside the provider's pattern/);
    await modern.close();
  });

  it('passes an upstream JSON-RPC error on unchanged', async () => {
    const { client } = await legacyClient(`/api/v1/mcp-proxy/${ids.alpha}/mcp`);
    // A name the provider never listed is not forwarded at all.
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(
      /Unknown tool: no_such_tool/,
    );
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'a', value: 'b' } }),
    ).rejects.toThrow(/-32601|not found|Method/i);
    await client.close();
  });

  it('answers 502 for a provider that cannot be reached', async () => {
    const client = await modernClient(`/api/v1/mcp-proxy/${ids.dead}/mcp`);
    await expect(client.listTools()).rejects.toThrow(/502|could not|did not list/i);
    await client.close();
  });
});

describe('OpenAPI document', () => {
  it('documents the MCP endpoints, the tool gate and the tool-collisions report', async () => {
    const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths['/api/v1/mcp/mcp'] ?? {}).sort()).toEqual(['delete', 'get', 'post']);
    expect(Object.keys(doc.paths['/api/v1/mcp-proxy/{providerId}/mcp'] ?? {}).sort()).toEqual([
      'delete',
      'get',
      'post',
    ]);
    expect(doc.paths['/api/v1/tool-gate/evaluate']).toHaveProperty('post');
    expect(doc.paths['/api/v1/tool-gate/audit']).toHaveProperty('post');
    expect(doc.paths['/api/v1/mcp/tool-collisions']).toHaveProperty('get');
  });
});

describe('tool collisions', () => {
  it("reports no collision for a name outside a provider's pattern (beta's `shared` is not beta's to offer), and needs provider:read", async () => {
    const res = await fetch(`${gw.url}/api/v1/mcp/tool-collisions`, {
      headers: { authorization: `Bearer ${gw.adminToken}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: [], listedPerUser: [] });
    expect(
      (await fetch(`${gw.url}/api/v1/mcp/tool-collisions`, { headers: { authorization: `Bearer ${runtimeToken}` } }))
        .status,
    ).toBe(401);
  });
});

describe('transport behaviour', () => {
  const post = (body: unknown, headers: Record<string, string> = {}, path = '/api/v1/mcp/mcp') =>
    fetch(gw.url + path, {
      method: 'POST',
      headers: {
        ...bearer(),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const init = async (version: string) => {
    const res = await post({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(version);
    return res.headers.get('mcp-session-id')!;
  };

  it('negotiates every session revision and answers batches only on 2025-03-26', async () => {
    for (const v of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) await init(v);
    const old = await init('2025-03-26');
    const batch = await post(
      [
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ],
      { 'mcp-session-id': old, 'mcp-protocol-version': '2025-03-26' },
    );
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as { id: number }[];
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2]);
    const newer = await init('2025-11-25');
    const refused = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }], {
      'mcp-session-id': newer,
      'mcp-protocol-version': '2025-11-25',
    });
    expect(refused.status).toBe(400);
  });

  it('streams progress notifications before the result when the client accepts SSE', async () => {
    const sid = await init('2025-11-25');
    const res = await post(
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'slow', arguments: {}, _meta: { progressToken: 'tok' } },
      },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
    );
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const progressAt = text.indexOf('notifications/progress');
    expect(progressAt).toBeGreaterThan(-1);
    expect(text.indexOf('slow done')).toBeGreaterThan(progressAt);
    expect(text).toContain('"progressToken":"tok"');
  });

  it('refuses an unsupported MCP-Protocol-Version, a foreign Origin, a missing or forged session', async () => {
    expect(
      (await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' })).status,
    ).toBe(400);
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'https://evil.example' })).status).toBe(
      403,
    );
    expect(
      (
        await post(
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { origin: 'http://localhost:3000', 'mcp-session-id': await init('2025-11-25') },
        )
      ).status,
    ).toBe(200);
    // Without a session the request is served statelessly (sessionless.test.ts); only a named one must exist.
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
    expect(
      (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': 'v1.forged.session.id' }))
        .status,
    ).toBe(404);
  });

  it('answers 2026-07-28 server/discover and an unsupported _meta version with -32022', async () => {
    const meta = (v: string) => ({
      _meta: { 'io.modelcontextprotocol/protocolVersion': v, 'io.modelcontextprotocol/clientCapabilities': {} },
    });
    const res = await post(
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: meta('2026-07-28') },
      { 'mcp-protocol-version': '2026-07-28' },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      result: { supportedVersions: expect.arrayContaining(['2026-07-28', '2024-11-05']), resultType: 'complete' },
    });
    const bad = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: meta('2030-01-01') });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32022 } });
  });

  it('GET opens the session stream and DELETE without a session is a 400', async () => {
    const sid = await init('2025-11-25');
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
      headers: { ...bearer(), accept: 'text/event-stream', 'mcp-session-id': sid },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    await reader.read();
    await gw.deps.bus.publish('rules.changed', { subjectType: null, subjectId: null });
    let text = '';
    while (!text.includes('list_changed')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain('notifications/tools/list_changed');
    controller.abort();
    expect((await fetch(`${gw.url}/api/v1/mcp/mcp`, { method: 'DELETE', headers: bearer() })).status).toBe(400);
  });

  it('answers malformed JSON-RPC on every route with 4xx, never 5xx', async () => {
    const sid = await init('2025-11-25');
    const bodies: unknown[] = [
      '{not json',
      '[]',
      '42',
      'null',
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: { x: 1 }, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 7 },
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: [1, 2] },
    ];
    for (const path of [
      '/api/v1/mcp/mcp',
      `/api/v1/mcp-proxy/${ids.alpha}/mcp`,
      '/api/v1/mcp-proxy/no-such-provider/mcp',
    ]) {
      for (const body of bodies) {
        const res = await post(body, { 'mcp-session-id': sid }, path);
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBeLessThan(500);
      }
    }
    for (const path of ['/api/v1/tool-gate/evaluate', '/api/v1/tool-gate/audit']) {
      for (const body of ['{not json', '[]', { toolName: 5 }, {}]) {
        const res = await post(body, {}, path);
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
      }
    }
    const unknown = await post({ jsonrpc: '2.0', id: 3, method: 'no/such' }, { 'mcp-session-id': sid });
    expect(await unknown.json()).toMatchObject({ error: { code: -32601 } });
    const badParams = await post(
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { arguments: {} } },
      { 'mcp-session-id': sid },
    );
    expect(await badParams.json()).toMatchObject({ error: { code: -32602 } });
  });

  it('cancels the upstream call when the client goes away', async () => {
    let release!: () => void;
    const hang = await startMcpServer({
      tools: [{ name: 'hang_forever', handler: () => new Promise<string>((r) => (release = () => r('late'))) }],
    });
    const p = await gw.catalog.providers.create(gw.admin, {
      name: 'hang',
      pattern: 'hang_*',
      endpoint: hang.url,
      authType: 'none',
      priority: 1,
    });
    try {
      const sid = await init('2025-11-25');
      const controller = new AbortController();
      const pending = fetch(`${gw.url}/api/v1/mcp/mcp`, {
        method: 'POST',
        signal: controller.signal,
        headers: {
          ...bearer(),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sid,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'hang_forever', arguments: {} },
        }),
      })
        .then((r) => r.text())
        .catch(() => 'aborted');
      await expect.poll(() => hang.calls.length).toBe(1);
      controller.abort();
      await pending;
      await expect
        .poll(() => hang.requests.some((r) => (r.body as { method?: string })?.method === 'notifications/cancelled'))
        .toBe(true);
      release();
    } finally {
      await gw.catalog.providers.delete(gw.admin, p.id);
      await hang.close();
    }
  });
});

describe('tool lists', () => {
  // The upstream never answers anything, so the list can only come back by leaving it out at the
  // gateway's short list deadline; a list that waited for it fails by the test's own timeout.
  it('a silent upstream does not stall the list: it is left out after MCP_LIST_TIMEOUT_MS, and hung up on', async () => {
    const quick = await startGatewayUnderTest({ env: { MCP_LIST_TIMEOUT_MS: '300' } });
    const { createServer } = await import('node:http');
    let hungUp = false;
    const silent = createServer((_req, res) => void res.on('close', () => (hungUp = true)));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      await quick.catalog.providers.create(quick.admin, {
        name: 'alpha',
        pattern: '*',
        endpoint: alpha.url,
        authType: 'bearer',
        authSecret: 'alpha-secret',
        priority: 0,
      });
      await quick.catalog.providers.create(quick.admin, {
        name: 'silent',
        pattern: 'silent_*',
        endpoint: `http://127.0.0.1:${(silent.address() as { port: number }).port}/mcp`,
        authType: 'none',
        priority: 2,
      });
      const { agent, runtimeToken: token } = await quick.catalog.agents.create(quick.admin, {
        name: 'lister',
        upstreamUrl: 'http://127.0.0.1:9/agent',
      });
      await quick.catalog.rules.create(quick.admin, {
        subjectType: 'agent',
        subjectId: agent.id,
        providerId: '*',
        action: 'allow',
        toolPattern: '*',
      });
      const client = await modernClient(undefined, { url: quick.url, headers: { authorization: `Bearer ${token}` } });
      const listed = names((await client.listTools()).tools);
      expect(listed).toContain('echo');
      expect(listed.filter((name) => name.startsWith('silent_'))).toEqual([]);
      await expect.poll(() => hungUp, { timeout: 10_000 }).toBe(true);
      await client.close();
    } finally {
      silent.closeAllConnections();
      silent.close();
      await quick.close();
    }
  });

  it('drops a provider’s cached list on notifications/tools/list_changed and reflects rule changes at once', async () => {
    // One McpServer per upstream session: the new tool appears on every one, as a server's tool set
    // changes for all its sessions (the gateway lists on its own session, calls on the caller's).
    const servers: McpServer[] = [];
    const growing = await startMcpServer({
      tools: [
        {
          name: 'grow_add',
          handler: async () => {
            for (const server of servers)
              server.registerTool('grow_new', {}, async () => ({ content: [{ type: 'text', text: 'new' }] }));
            return 'added';
          },
        },
      ],
      setup: (s) => servers.push(s),
    });
    const p = await gw.catalog.providers.create(gw.admin, {
      name: 'growing',
      pattern: 'grow_*',
      endpoint: growing.url,
      authType: 'none',
      priority: 3,
    });
    try {
      const client = await modernClient();
      expect(names((await client.listTools()).tools)).not.toContain('grow_new');
      // registerTool on a connected SDK server sends notifications/tools/list_changed on the session's server stream.
      await client.callTool({ name: 'grow_add', arguments: {} });
      await expect.poll(async () => names((await client.listTools()).tools)).toContain('grow_new');
      const rule = await gw.catalog.rules.create(gw.admin, {
        subjectType: 'agent',
        subjectId: ids.agent,
        providerId: p.id,
        action: 'deny',
        toolPattern: 'grow_new',
      });
      expect(names((await client.listTools()).tools)).not.toContain('grow_new');
      await gw.catalog.rules.delete(gw.admin, rule.id);
      await client.close();
    } finally {
      await gw.catalog.providers.delete(gw.admin, p.id);
      await growing.close();
    }
  });
});

describe('tool gate', () => {
  const gatePost = (path: string, body: unknown) =>
    fetch(`${gw.url}/api/v1/tool-gate/${path}`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('evaluates allow / denied / confirmed with an audit id, and completes or creates audit records', async () => {
    const allow = (await (
      await gatePost('evaluate', { toolName: 'echo', providerId: ids.alpha, params: { q: 1 } })
    ).json()) as { auditId: string; decision: string; risk: string };
    expect(allow).toMatchObject({ decision: 'allow', risk: 'low', auditId: expect.any(String) });
    expect(await (await gatePost('evaluate', { toolName: 'secret', providerId: ids.alpha })).json()).toMatchObject({
      decision: 'denied',
      risk: 'high',
    });
    gateAnswer = 'confirmed';
    expect(await (await gatePost('evaluate', { toolName: 'risky', providerId: ids.alpha })).json()).toMatchObject({
      decision: 'confirmed',
      confirmedBy: 'boss',
    });
    gateAnswer = 'rejected';
    expect(await (await gatePost('evaluate', { toolName: 'risky', providerId: ids.alpha })).json()).toMatchObject({
      decision: 'rejected',
      reason: 'not today',
    });
    gateAnswer = 'timeout';
    expect(await (await gatePost('evaluate', { toolName: 'risky', providerId: ids.alpha })).json()).toMatchObject({
      decision: 'timeout',
      reason: 'Request timed out',
    });
    const done = await gatePost('audit', { auditId: allow.auditId, result: { ok: true }, durationMs: 12 });
    expect(done.status).toBe(200);
    await expect
      .poll(() => audits.some((j) => j.op === 'update' && j.id === allow.auditId && j.duration === 12))
      .toBe(true);
    expect((await gatePost('audit', { result: {} })).status).toBe(400);
    const created = (await (
      await gatePost('audit', { toolName: 'echo', providerId: ids.alpha, result: { n: 1 } })
    ).json()) as { auditId: string };
    await expect.poll(() => audits.some((j) => j.op === 'create' && j.id === created.auditId)).toBe(true);
  });
});

describe('flexible auth', () => {
  const listAs = async (headers: Record<string, string>) => {
    const client = new ClientV2(
      { name: 'auth-test', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new TransportV2(new URL(`${gw.url}/api/v1/mcp/mcp`), { requestInit: { headers } }));
    return client;
  };

  it('a session token with the matching X-Agent-Id acts as the end user: its identity goes upstream and its rules apply', async () => {
    const endUser = await createUser(gw.deps, { email: `end-${Date.now()}@example.com`, roles: ['agent_creator'] });
    const { token } = await gw.deps.auth.issueSessionToken({
      endUserId: endUser.id,
      email: endUser.email,
      roles: endUser.roles,
      tenantId: null,
      agentId: ids.agent,
      requestId: 'req_test',
    });
    // A user-level deny beats the agent's allow (evaluation order step 1).
    const rule = await gw.catalog.rules.create(gw.admin, {
      subjectType: 'user',
      subjectId: endUser.id,
      providerId: ids.alpha,
      action: 'deny',
      toolPattern: 'fails',
    });
    try {
      const client = await listAs({ 'x-gateway-session-token': token, 'x-agent-id': ids.agent });
      const tools = names((await client.listTools()).tools);
      expect(tools).toContain('echo');
      expect(tools).not.toContain('fails');
      await client.callTool({ name: 'echo', arguments: {} });
      const headers = alpha.calls.at(-1)!.headers;
      expect(headers['x-end-user-id']).toBe(endUser.id);
      expect(headers['x-end-user-email']).toBe(endUser.email);
      expect(headers['x-end-user-roles']).toBe('agent_creator');
      expect(headers['x-gateway-agent-id']).toBe(ids.agent);
      await client.close();
      const mismatch = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
        method: 'POST',
        headers: {
          'x-gateway-session-token': token,
          'x-agent-id': 'another-agent',
          'content-type': 'application/json',
          'mcp-protocol-version': '2026-07-28',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'ping',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      expect(mismatch.status).toBe(401);
    } finally {
      await gw.catalog.rules.delete(gw.admin, rule.id);
    }
  });

  it('a gk_ API key with X-User-Id and X-Agent-Id, and a user JWT alone (user rules only), are accepted', async () => {
    const key = generateApiKey();
    await gw.deps.db
      .insertInto('api_keys')
      .values({
        id: `k-${Date.now()}`,
        name: 'runtime',
        key_hash: key.hash,
        key_prefix: key.prefix,
        scopes: ['credentials:resolve'],
        user_id: gw.admin.userId,
        tenant_id: null,
      })
      .execute();
    const viaKey = await listAs({ 'x-api-key': key.token, 'x-user-id': gw.admin.userId!, 'x-agent-id': ids.agent });
    expect(names((await viaKey.listTools()).tools)).toContain('echo');
    await viaKey.close();
    // The admin has no user-level rule: alone (no agent) nothing is allowed, by default deny.
    const viaJwt = await listAs({ authorization: `Bearer ${gw.adminToken}` });
    expect((await viaJwt.listTools()).tools).toEqual([]);
    await viaJwt.close();
  });
});

describe('kill switch', () => {
  it('refuses a disabled agent at once, on MCP and the tool gate', async () => {
    const { client } = await legacyClient();
    await gw.catalog.agents.setActive(gw.admin, ids.agent, false);
    try {
      await expect(client.listTools()).rejects.toMatchObject({
        code: 403,
        message: expect.stringMatching(/AGENT_DISABLED/),
      });
      const res = await fetch(`${gw.url}/api/v1/tool-gate/evaluate`, {
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/json' },
        body: JSON.stringify({ toolName: 'echo', providerId: ids.alpha }),
      });
      expect(res.status).toBe(403);
    } finally {
      await gw.catalog.agents.setActive(gw.admin, ids.agent, true);
      await client.close().catch(() => undefined);
    }
  });
});

describe('upstream failures on tools/call', () => {
  it('answers 502 for an unreachable upstream and 504 past MCP_UPSTREAM_TIMEOUT_MS', async () => {
    const quick = await startGatewayUnderTest({ env: { MCP_UPSTREAM_TIMEOUT_MS: '300' } });
    const { createServer } = await import('node:http');
    // Lists its one tool (a call is forwarded only for a listed name), then never answers the call.
    const silent = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const message = JSON.parse(raw || '{}') as { id?: number; method?: string };
        if (message.method === 'tools/call') return;
        if (message.id === undefined) return void res.writeHead(202).end();
        const answer =
          message.method === 'initialize'
            ? {
                result: {
                  protocolVersion: '2025-06-18',
                  capabilities: { tools: {} },
                  serverInfo: { name: 'silent', version: '1' },
                },
              }
            : message.method === 'tools/list'
              ? { result: { tools: [{ name: 'silent_tool', inputSchema: { type: 'object' } }] } }
              : { error: { code: -32601, message: 'Method not found' } };
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...answer }));
      });
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      await quick.catalog.providers.create(quick.admin, {
        name: 'dead',
        pattern: 'dead_*',
        endpoint: 'http://127.0.0.1:9/mcp',
        authType: 'none',
        priority: 0,
      });
      await quick.catalog.providers.create(quick.admin, {
        name: 'silent',
        pattern: 'silent_*',
        endpoint: `http://127.0.0.1:${(silent.address() as { port: number }).port}/mcp`,
        authType: 'none',
        priority: 0,
      });
      const agent = await quick.catalog.agents.create(quick.admin, { name: 'x', upstreamUrl: 'http://127.0.0.1:9/a' });
      await quick.catalog.rules.create(quick.admin, {
        subjectType: 'agent',
        subjectId: agent.agent.id,
        providerId: '*',
        action: 'allow',
        toolPattern: '*',
      });
      const call = (name: string) =>
        fetch(`${quick.url}/api/v1/mcp/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${agent.runtimeToken}`,
            'content-type': 'application/json',
            accept: 'application/json',
            'mcp-protocol-version': '2026-07-28',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: {
              name,
              arguments: {},
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {},
              },
            },
          }),
        });
      const dead = await call('dead_tool');
      expect(dead.status).toBe(502);
      expect(await dead.json()).toMatchObject({ error: { code: -32010 } });
      const slow = await call('silent_tool');
      expect(slow.status).toBe(504);
      expect(await slow.json()).toMatchObject({ error: { code: -32011 } });
    } finally {
      silent.closeAllConnections();
      silent.close();
      await quick.close();
    }
  });
});

describe('egress policy', () => {
  it('never contacts an upstream the policy refuses (public-only and a loopback provider): 403 EGRESS_REFUSED on the unified endpoint and the proxy', async () => {
    const strict = await startGatewayUnderTest({ env: { EGRESS_POLICY: 'public-only' } });
    try {
      const local = await strict.catalog.providers.create(strict.admin, {
        name: 'local',
        pattern: '*',
        endpoint: alpha.url,
        authType: 'bearer',
        authSecret: 'alpha-secret',
        priority: 0,
      });
      const agent = await strict.catalog.agents.create(strict.admin, {
        name: 'x',
        upstreamUrl: 'http://127.0.0.1:9/a',
      });
      await strict.catalog.rules.create(strict.admin, {
        subjectType: 'agent',
        subjectId: agent.agent.id,
        providerId: '*',
        action: 'allow',
        toolPattern: '*',
      });
      const before = alpha.requests.length;
      const res = await fetch(`${strict.url}/api/v1/mcp/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${agent.runtimeToken}`,
          'content-type': 'application/json',
          accept: 'application/json',
          'mcp-protocol-version': '2026-07-28',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'echo',
            arguments: {},
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({
        error: { code: -32003, data: { code: 'EGRESS_REFUSED', reason: 'private-address' } },
      });
      // The proxy's tools/list and any forwarded method are refused the same way.
      for (const method of ['tools/list', 'prompts/list']) {
        const proxied = await fetch(`${strict.url}/api/v1/mcp-proxy/${local.id}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${agent.runtimeToken}`,
            'content-type': 'application/json',
            accept: 'application/json',
            'mcp-protocol-version': '2026-07-28',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 2,
            method,
            params: {
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {},
              },
            },
          }),
        });
        expect(proxied.status).toBe(403);
        expect(await proxied.json()).toMatchObject({ error: { code: -32003, data: { code: 'EGRESS_REFUSED' } } });
      }
      expect(alpha.requests.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});

describe('without the confirmation hub', () => {
  it('refuses calls that need a human with a clear reason, and ends their audit record rejected with it, once', async () => {
    const written: ({ id: string } & AuditPatch)[] = [];
    const plain = await startGatewayUnderTest({
      audit: (deps) => {
        const real = createAuditTrail({ queue: deps.queue, clock: deps.clock });
        return {
          open: (entry) => real.open(entry),
          async update(id, patch) {
            written.push({ id, ...patch });
            await real.update(id, patch);
          },
        };
      },
    });
    try {
      const p = await plain.catalog.providers.create(plain.admin, {
        name: 'alpha',
        pattern: '*',
        endpoint: alpha.url,
        authType: 'bearer',
        authSecret: 'alpha-secret',
        priority: 0,
      });
      const agent = await plain.catalog.agents.create(plain.admin, {
        name: 'careful',
        upstreamUrl: 'http://127.0.0.1:9/a',
        requireConfirmation: true,
      });
      await plain.catalog.rules.create(plain.admin, {
        subjectType: 'agent',
        subjectId: agent.agent.id,
        providerId: p.id,
        action: 'allow',
        toolPattern: '*',
      });
      const client = new ClientV2({ name: 'c', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(
        new TransportV2(new URL(`${plain.url}/api/v1/mcp/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${agent.runtimeToken}` } },
        }),
      );
      await expect(client.callTool({ name: 'echo', arguments: {} })).rejects.toThrow(new RegExp(NO_CONFIRMATION_HUB));
      // Before this gate wrote it, the record stayed pending: nothing else ends a held call's record.
      expect(written).toEqual([{ id: expect.any(String), status: 'rejected', error: NO_CONFIRMATION_HUB }]);
      await client.close();
    } finally {
      await plain.close();
    }
  });
});
