import { registerClientFeatureTools, SseEventReader, startMcpServer, type McpFixture } from '@agentgw/testkit';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Json } from './gateway-api.js';
import { sessionlessRpc, textOf } from './mcp-clients.js';
import { SuiteResources, type SuiteAgent } from './suite-resources.js';
import type { SuiteContext } from './suite.js';

const CAPABLE = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };
const ITEMS = ['alpha', 'beta', 'gamma'];
const TEMPLATE = 'e2e-items://items/{id}';

/** What the interop upstream was asked outside tool calls. */
interface Seen {
  levels: string[];
  subscribed: string[];
  unsubscribed: string[];
}

/**
 * The upstream's extras beside registerClientFeatureTools: a resource template with completion,
 * logging/setLevel and resources/subscribe (recorded in `seen`), and `io_touch`, which announces
 * `notifications/resources/updated` on its own answer stream.
 */
function interopFeatures(seen: Seen): (server: McpServer) => void {
  return (server) => {
    server.server.registerCapabilities({ logging: {}, resources: { subscribe: true } });
    server.server.setRequestHandler(SetLevelRequestSchema, (request) => (seen.levels.push(request.params.level), {}));
    server.server.setRequestHandler(
      SubscribeRequestSchema,
      (request) => (seen.subscribed.push(request.params.uri), {}),
    );
    server.server.setRequestHandler(
      UnsubscribeRequestSchema,
      (request) => (seen.unsubscribed.push(request.params.uri), {}),
    );
    const complete = { id: (value: string) => ITEMS.filter((item) => item.startsWith(value)) };
    server.registerResource(
      'item',
      new ResourceTemplate(TEMPLATE, { list: undefined, complete }),
      { mimeType: 'text/plain' },
      (uri, variables) => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${String(variables.id)}` }],
      }),
    );
    server.registerTool(
      'io_touch',
      { description: 'announces that an item changed', inputSchema: {} },
      async (_args, extra) => {
        await extra.sendNotification({
          method: 'notifications/resources/updated',
          params: { uri: 'e2e-items://items/beta' },
        });
        return { content: [{ type: 'text', text: 'touched' }] };
      },
    );
    registerClientFeatureTools(server);
  };
}

/**
 * Issue 21 from outside through the target's base URL: an upstream's sampling, elicitation and
 * roots requests during `tools/call` reach SDK clients that declared them and the answers get
 * back (21.1 — on the distributed target the answer POST goes through the router's round robin to
 * either mcp-gateway replica, the relay store being Redis), and the unified endpoint's templated
 * `resources/read`, `completion/complete`, `logging/setLevel` and `resources/subscribe` (21.3).
 * With `replicas` (the two mcp-gateway base URLs), the relay is also driven replica by replica.
 */
export function describeMcpInteropSuite(
  ctx: () => SuiteContext,
  options: { replicas?: () => [string, string] } = {},
): void {
  describe('MCP interop (issue 21)', () => {
    let c: SuiteContext;
    let made: SuiteResources;
    let report: (line: string) => void;
    let upstream: McpFixture;
    let agent: SuiteAgent;
    const seen: Seen = { levels: [], subscribed: [], unsubscribed: [] };

    const mcp = () => `${c.target.baseUrl}/api/v1/mcp/mcp`;
    const headers = () => ({ authorization: `Bearer ${agent.token}` });

    /** A 1.x client declaring `capabilities`, answering those of sampling (echo), elicitation (Ada) and roots it declared. */
    const v1Client = async (capabilities: Record<string, unknown> = CAPABLE): Promise<ClientV1> => {
      const client = new ClientV1({ name: 'e2e-interop-v1', version: '1.0.0' }, { capabilities });
      if ('sampling' in capabilities)
        client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
          role: 'assistant',
          model: 'e2e-model',
          content: { type: 'text', text: `v1 heard ${(request.params.messages[0]!.content as { text: string }).text}` },
        }));
      if ('elicitation' in capabilities)
        client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'Ada' } }));
      if ('roots' in capabilities)
        client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///e2e-v1' }] }));
      await client.connect(new TransportV1(new URL(mcp()), { requestInit: { headers: headers() } }));
      return client;
    };

    beforeAll(async () => {
      c = ctx();
      made = new SuiteResources(c);
      report = (line) => process.stdout.write(`[mcp-interop e2e ${c.target.name}] ${line}\n`);
      upstream = await startMcpServer({
        name: 'interop',
        tools: [{ name: 'io_plain', handler: () => 'plain done' }],
        setup: interopFeatures(seen),
      });
      const provider = await made.provider({ name: 'io-interop', pattern: '*', endpoint: upstream.url });
      agent = await made.agent('io-interop', [provider]);
    }, 60_000);

    afterAll(async () => {
      await made?.cleanup();
      await upstream?.close();
    });

    it('21.1: sampling, elicitation and roots asked during tools/call reach a capable 1.x client and its answers reach the upstream (answers through either replica)', async () => {
      const bare = await v1Client({});
      const client = await v1Client();
      const answers: string[] = [];
      try {
        expect((await bare.listTools()).tools.map((t) => t.name).sort()).toEqual(['io_plain', 'io_touch']);
        expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
          'ask_model',
          'ask_user',
          'io_plain',
          'io_touch',
          'list_roots',
        ]);
        // Several round trips: with the router's round robin the answer POSTs land on both replicas.
        for (let i = 0; i < 3; i++)
          answers.push(textOf(await client.callTool({ name: 'ask_model', arguments: { prompt: `question ${i}` } })));
        expect(answers).toEqual([
          'model said: v1 heard question 0',
          'model said: v1 heard question 1',
          'model said: v1 heard question 2',
        ]);
        expect(textOf(await client.callTool({ name: 'ask_user', arguments: {} }))).toBe('user accept: Ada');
        expect(textOf(await client.callTool({ name: 'list_roots', arguments: {} }))).toBe('file:///e2e-v1');
        expect(textOf(await client.callTool({ name: 'io_plain', arguments: {} }))).toBe('plain done');
      } finally {
        await Promise.all([bare.close(), client.close()]);
      }
      // The relayed sampling is audited on its own, attributed to the call it came during.
      const rows = await vi.waitFor(
        async () => {
          const all = await c.auditRowsOf(agent.id);
          const sampling = all.filter((r) => r.toolName === 'sampling/createMessage' && r.status === 'completed');
          if (sampling.length < 3)
            throw new Error(`sampling rows so far: ${JSON.stringify(all.map((r) => [r.toolName, r.status]))}`);
          return all;
        },
        { timeout: 20_000, interval: 200 },
      );
      const askIds = new Set(rows.filter((r) => r.toolName === 'ask_model').map((r) => r.id));
      const sampling = rows.filter((r) => r.toolName === 'sampling/createMessage');
      expect(sampling.every((r) => askIds.has(r.arguments?.relayedFor))).toBe(true);
      expect(rows.some((r) => r.toolName === 'elicitation/create' && r.status === 'completed')).toBe(true);
      report(
        `21.1 (1.x): ${answers.length}× ask_model → "${answers[0]}" …; ask_user → Ada; list_roots → file:///e2e-v1; audit: ${sampling.length} sampling/createMessage rows completed, each relayedFor its ask_model call`,
      );
    });

    it('21.1: the same relay to a 2.x SDK client on the 2025 era', async () => {
      const client = new ClientV2({ name: 'e2e-interop-v2', version: '2.0.0' }, { capabilities: CAPABLE });
      client.setRequestHandler('sampling/createMessage', (request) => ({
        role: 'assistant',
        model: 'e2e-model',
        content: { type: 'text', text: `v2 heard ${(request.params.messages[0]!.content as { text: string }).text}` },
      }));
      client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { name: 'Grace' } }));
      client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///e2e-v2' }] }));
      await client.connect(new TransportV2(new URL(mcp()), { requestInit: { headers: headers() } }));
      try {
        expect(textOf(await client.callTool({ name: 'ask_model', arguments: { prompt: 'hi' } }))).toBe(
          'model said: v2 heard hi',
        );
        expect(textOf(await client.callTool({ name: 'ask_user', arguments: {} }))).toBe('user accept: Grace');
        expect(textOf(await client.callTool({ name: 'list_roots', arguments: {} }))).toBe('file:///e2e-v2');
      } finally {
        await client.close();
      }
    });

    if (options.replicas) {
      const replicas = options.replicas;
      it('21.1: a relayed request a call on one mcp-gateway replica sent is answered by a POST to the other (relay store in Redis), both ways', async () => {
        const post = (base: string, body: unknown, session?: string) =>
          fetch(`${base}/api/v1/mcp/mcp`, {
            method: 'POST',
            headers: {
              ...headers(),
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': '2025-11-25',
              ...(session ? { 'mcp-session-id': session } : {}),
            },
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(30_000),
          });
        const init = await post(c.target.baseUrl, {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: CAPABLE,
            clientInfo: { name: 'e2e-raw', version: '1' },
          },
        });
        const session = init.headers.get('mcp-session-id')!;
        expect(session).toBeTruthy();
        expect(
          (await post(c.target.baseUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status,
        ).toBe(202);
        const seenPaths: string[] = [];
        for (const [from, to] of [
          [0, 1],
          [1, 0],
        ] as const) {
          const callId = 100 + from;
          const call = await post(
            replicas()[from],
            {
              jsonrpc: '2.0',
              id: callId,
              method: 'tools/call',
              params: { name: 'ask_model', arguments: { prompt: `from replica ${from}` } },
            },
            session,
          );
          expect(call.headers.get('content-type')).toContain('text/event-stream');
          const reader = new SseEventReader(call);
          try {
            const asked = await nextMessage(reader, (m) => m.method === 'sampling/createMessage');
            expect(String(asked.id)).toMatch(/^agentgw-relay-/);
            const answer = {
              role: 'assistant',
              model: 'e2e-model',
              content: { type: 'text', text: `answered on replica ${to}` },
            };
            expect((await post(replicas()[to], { jsonrpc: '2.0', id: asked.id, result: answer }, session)).status).toBe(
              202,
            );
            const done = await nextMessage(reader, (m) => m.id === callId);
            expect(done.result?.content?.[0]?.text, JSON.stringify(done)).toBe(`model said: answered on replica ${to}`);
            seenPaths.push(`call on ${from}, answer on ${to} → "${done.result.content[0].text}"`);
          } finally {
            await reader.close();
          }
        }
        await fetch(`${c.target.baseUrl}/api/v1/mcp/mcp`, {
          method: 'DELETE',
          headers: { ...headers(), 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
        });
        report(`21.1 (replicas): ${seenPaths.join('; ')}`);
      });
    }

    it('21.3: templated resources/read, completion/complete, logging/setLevel and resources/subscribe on the unified endpoint', async () => {
      const client = await v1Client();
      const updated: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
      try {
        const read = await client.readResource({ uri: 'e2e-items://items/beta' });
        expect(read.contents).toEqual([{ uri: 'e2e-items://items/beta', mimeType: 'text/plain', text: 'item beta' }]);
        const completed = await client.complete({
          ref: { type: 'ref/resource', uri: TEMPLATE },
          argument: { name: 'id', value: 'g' },
        });
        expect(completed.completion.values).toEqual(['gamma']);
        await client.setLoggingLevel('warning');
        expect(seen.levels).toContain('warning');
        await client.subscribeResource({ uri: 'e2e-items://items/beta' });
        expect(seen.subscribed).toContain('e2e-items://items/beta');
        // An update the upstream announces on a forwarded call's stream reaches the subscriber.
        expect(textOf(await client.callTool({ name: 'io_touch', arguments: {} }))).toBe('touched');
        await expect.poll(() => updated, { timeout: 10_000 }).toContain('e2e-items://items/beta');
        await client.unsubscribeResource({ uri: 'e2e-items://items/beta' });
        expect(seen.unsubscribed).toContain('e2e-items://items/beta');
      } finally {
        await client.close();
      }
      // Sessionless: the same read, and the errors a client gets for a uri nobody serves and a bad level.
      const plain = await sessionlessRpc(mcp(), headers(), 'resources/read', { uri: 'e2e-items://items/alpha' });
      expect(plain.body.result?.contents?.[0]?.text, JSON.stringify(plain.body)).toBe('item alpha');
      const nowhere = await sessionlessRpc(mcp(), headers(), 'resources/read', { uri: 'nowhere://x/1' });
      expect(nowhere.body.error).toMatchObject({ code: -32002 });
      const loud = await sessionlessRpc(mcp(), headers(), 'logging/setLevel', { level: 'loud' });
      expect(loud.body.error).toMatchObject({ code: -32602 });
      report(
        `21.3: read e2e-items://items/beta → "item beta"; complete id "g" → [gamma]; setLevel warning reached the upstream; subscribe/unsubscribe reached it and resources/updated came back; unknown uri ${nowhere.body.error.code}, level "loud" ${loud.body.error.code}`,
      );
    });
  });
}

/** The next JSON-RPC message on an SSE answer that `match` accepts (others skipped). */
async function nextMessage(reader: SseEventReader, match: (message: Json) => boolean): Promise<Json> {
  for (;;) {
    const event = await reader.next(20_000);
    if (event === null) throw new Error('the answer stream ended first');
    if (match(event.data)) return event.data as Json;
  }
}
