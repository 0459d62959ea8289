import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';
import {
  replyJson,
  SseEventReader,
  startRecordingUpstream,
  type RecordedRequest,
  type RecordingUpstream,
} from '@agentgw/testkit';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';
import { startListeningUpstream } from './listening-upstream.fixtures.js';

// subscriptions/listen on the 2026-07-28 wire: one stream for the client, fed by a listen on a
// stateless upstream and by the GET stream of a session upstream; only what the filter asked for
// passes, under the client's subscription id; the upstream listens end when the client goes. The
// gateway's own list changes (providers, rules, pins) come out on it too, an upstream listen that
// ends is opened again, and the stream carries keep-alive comments (SSE_HEARTBEAT_MS).
let gw: GatewayUnderTest;
let modern: RecordingUpstream;
let legacy: RecordingUpstream;
let flaky: RecordingUpstream;
let runtimeToken: string;
let agentId: string;
let legacyId: string;
let flakyId: string;
const closed = { modernListen: 0 };

const sse = (res: ServerResponse, messages: unknown[]) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const m of messages) res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
};
const note = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', method, params });
const bodyOf = (req: RecordedRequest) => req.body as { id?: number; method?: string; params?: Record<string, unknown> };

beforeAll(async () => {
  modern = await startListeningUpstream(
    { name: 'm', capabilities: { tools: { listChanged: true } } },
    (id, params, res) => {
      const sub = { 'io.modelcontextprotocol/subscriptionId': id };
      // Held open until the gateway goes; what the client did not ask for comes first.
      res.on('close', () => closed.modernListen++);
      sse(res, [
        note('notifications/subscriptions/acknowledged', { _meta: sub, notifications: params?.notifications }),
        note('notifications/prompts/list_changed', { _meta: sub }),
        note('notifications/resources/updated', { _meta: sub, uri: 'file:///other' }),
        note('notifications/tools/list_changed', { _meta: sub }),
        note('notifications/resources/updated', { _meta: sub, uri: 'file:///a' }),
      ]);
    },
  );
  legacy = await startRecordingUpstream((req, res) => {
    if (req.method === 'GET') return sse(res, [note('notifications/resources/updated', { uri: 'file:///b' })]);
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    const body = bodyOf(req);
    if (body?.id === undefined) return void res.writeHead(202).end();
    if (body.method === 'initialize') {
      res.setHeader('mcp-session-id', 'legacy-session');
      return replyJson(res, 200, {
        jsonrpc: '2.0',
        id: body.id,
        result: {
          protocolVersion: '2025-11-25',
          capabilities: { resources: { subscribe: true } },
          serverInfo: { name: 'l', version: '1' },
        },
      });
    }
    if (body.method === 'server/discover')
      return replyJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Bad Request' } });
    return replyJson(res, 200, { jsonrpc: '2.0', id: body.id, result: {} });
  });
  // A 2026-07-28 upstream whose listen ends right after its acknowledgement (a restart, a lifetime).
  flaky = await startListeningUpstream({ name: 'f', capabilities: {} }, (id, _params, res) => {
    sse(res, [
      note('notifications/subscriptions/acknowledged', {
        _meta: { 'io.modelcontextprotocol/subscriptionId': id },
        notifications: {},
      }),
    ]);
    res.end();
  });
  gw = await startGatewayUnderTest({ env: { SSE_HEARTBEAT_MS: '200' } });
  // Each upstream is a no-auth provider of its own tool prefix.
  const register = async (name: string, pattern: string, endpoint: string) =>
    (await gw.catalog.providers.create(gw.admin, { name, pattern, endpoint, authType: 'none', priority: 0 })).id;
  await register('modern', 'm_*', modern.url);
  legacyId = await register('legacy', 'l_*', legacy.url);
  flakyId = await register('flaky', 'f_*', flaky.url);
  ({ runtimeToken, agentId } = await createRuleBoundAgent(gw));
});

afterAll(async () => {
  await gw?.close();
  await modern?.close();
  await legacy?.close();
  await flaky?.close();
});

const listen = (notifications: unknown, signal?: AbortSignal, path = '/api/v1/mcp/mcp') =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    signal,
    headers: {
      authorization: `Bearer ${runtimeToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'sub-1',
      method: 'subscriptions/listen',
      params: {
        notifications,
        _meta: { [META_PROTOCOL_VERSION]: MODERN_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} },
      },
    }),
  });

describe('subscriptions/listen', () => {
  it('acknowledges first, then merges what every provider sends that the filter asked for, and ends the upstream listens when the client goes', async () => {
    const client = new AbortController();
    const res = await listen(
      { toolsListChanged: true, resourceSubscriptions: ['file:///a', 'file:///b'] },
      client.signal,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = new SseEventReader(res);
    const first = await reader.next();
    expect(first?.data).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' },
        notifications: { toolsListChanged: true, resourceSubscriptions: ['file:///a', 'file:///b'] },
      },
    });
    const seen: unknown[] = [];
    while (seen.length < 3) seen.push((await reader.next(10_000))?.data);
    const sub = { 'io.modelcontextprotocol/subscriptionId': 'sub-1' };
    expect(seen).toEqual(
      expect.arrayContaining([
        { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: sub } },
        { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///a', _meta: sub } },
        { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///b', _meta: sub } },
      ]),
    );
    // The session upstream was asked for the uris on a session of the listen's own.
    const subscribed = legacy.requests
      .filter((r) => bodyOf(r)?.method === 'resources/subscribe')
      .map((r) => bodyOf(r).params?.uri);
    expect(subscribed).toEqual(['file:///a', 'file:///b']);
    client.abort();
    await reader.close();
    await expect.poll(() => closed.modernListen).toBe(1);
    await expect.poll(() => legacy.requests.some((r) => r.method === 'DELETE')).toBe(true);
  });

  it('refuses a malformed filter with -32602, and is an unknown method (-32601) on a legacy wire', async () => {
    const bad = await listen({ resourceSubscriptions: 'file:///a' });
    expect(bad.status).toBe(200);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32602);
    const res = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${runtimeToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { notifications: {} } }),
    });
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32601);
  });

  it("tells an open listen of the gateway's own list changes (tool pin, access rule, provider), as its filter asked", async () => {
    const client = new AbortController();
    // The proxy to the session upstream: its GET stream sends only a resource update nobody asked for.
    const res = await listen({ toolsListChanged: true }, client.signal, `/api/v1/mcp-proxy/${legacyId}/mcp`);
    const reader = new SseEventReader(res);
    expect((await reader.next())?.data).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
    const toolsChanged = {
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } },
    };
    const pin = {
      providerId: legacyId,
      tenantId: null,
      toolName: 'l_read',
      renamedFrom: null,
      timestamp: new Date().toISOString(),
    };
    await gw.deps.bus.publish('tool_pins.changed', { ...pin, change: 'quarantined' });
    expect((await reader.next(10_000))?.data).toEqual(toolsChanged);
    await gw.catalog.rules.create(gw.admin, {
      subjectType: 'agent',
      subjectId: agentId,
      providerId: '*',
      action: 'allow',
      toolPattern: 'l_more',
    });
    expect((await reader.next(10_000))?.data).toEqual(toolsChanged);
    // A provider change touches every list; only the tools were asked for.
    await gw.catalog.providers.create(gw.admin, {
      name: 'later',
      pattern: 'x_*',
      endpoint: legacy.url,
      authType: 'none',
      priority: 0,
    });
    expect((await reader.next(10_000))?.data).toEqual(toolsChanged);
    client.abort();
    await reader.close();
  });

  it('opens an upstream listen again when it ends while the client still listens, and keeps the stream alive with comments', async () => {
    const client = new AbortController();
    const listens = () => flaky.requests.filter((r) => bodyOf(r)?.method === 'subscriptions/listen').length;
    const before = listens();
    const res = await listen({ toolsListChanged: true }, client.signal, `/api/v1/mcp-proxy/${flakyId}/mcp`);
    expect(res.status).toBe(200);
    await expect.poll(listens, { timeout: 10_000 }).toBeGreaterThanOrEqual(before + 3);
    const body = res.body!.getReader();
    let text = '';
    while (!text.includes(': keep-alive\n\n')) {
      const chunk = await body.read();
      if (chunk.done) throw new Error('listen stream ended');
      text += new TextDecoder().decode(chunk.value);
    }
    expect(text).toContain('notifications/subscriptions/acknowledged');
    client.abort();
    await body.cancel().catch(() => undefined);
  });
});
