import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMcpServer, startMcpV2Server, type McpFixture } from '@agentgw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { McpUpstreamError } from './errors.js';
import { MODERN_PROTOCOL_VERSION } from './protocol.js';
import { McpUpstreamClient } from './upstream-client.js';

const fixtures: { close(): Promise<void> }[] = [];
const clients: McpUpstreamClient[] = [];
afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((f) => f.close()));
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
});

const track = <T extends { close(): Promise<void> }>(f: T): T => (fixtures.push(f), f);
const newClient = (options?: ConstructorParameters<typeof McpUpstreamClient>[0]) => {
  const client = new McpUpstreamClient(options);
  clients.push(client);
  return client;
};

async function rawServer(
  handler: Parameters<typeof createServer>[1],
): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer(handler);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return track({
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((r) => http.close(() => r()));
    },
  });
}

const echoTools = [
  { name: 'echo', handler: (args: Record<string, unknown>) => `echo:${JSON.stringify(args)}` },
  { name: 'fails', handler: () => ({ content: [{ type: 'text' as const, text: 'nope' }], isError: true }) },
];

describe('McpUpstreamClient against a 1.x (session) SDK server', () => {
  it('initializes once, remembers the version, lists and calls with the session and headers', async () => {
    const fx: McpFixture = track(await startMcpServer({ tools: echoTools, auth: { bearer: 's3cret' } }));
    const client = newClient();
    const target = { endpoint: fx.url, headers: { authorization: 'Bearer s3cret', 'x-user-id': 'u1' } };
    const { items } = await client.listAll(target, 'tools/list', 'tools');
    expect(items.map((t) => t.name)).toEqual(['echo', 'fails']);
    expect(client.knownProtocol(target)).toBe('2025-11-25');
    const { response, session } = await client.request(target, 'tools/call', { name: 'fails', arguments: {} });
    expect(response).toMatchObject({ result: { isError: true, content: [{ text: 'nope' }] } });
    expect(session.sessionId).toEqual(expect.any(String));
    // One discover probe, one initialize, one initialized, then list and call on the same session.
    expect(fx.requests.filter((r) => (r.body as { method?: string })?.method === 'initialize')).toHaveLength(1);
    expect(fx.calls[0]!.headers['x-user-id']).toBe('u1');
  });

  it('opens a fresh session when the one passed in expired upstream and hands it back', async () => {
    const fx = track(await startMcpServer({ tools: echoTools }));
    const client = newClient();
    const target = { endpoint: fx.url };
    const stale = { protocolVersion: '2025-11-25', sessionId: 'gone' };
    const { response, session } = await client.request(
      target,
      'tools/call',
      { name: 'echo', arguments: {} },
      { session: stale },
    );
    expect('result' in response).toBe(true);
    expect(session.sessionId).not.toBe('gone');
  });

  it('passes progress notifications through while the call runs', async () => {
    const fx = track(
      await startMcpServer({
        tools: [
          {
            name: 'slow',
            handler: async (_args, call) => {
              await call.sendProgress?.(1, 2);
              await call.sendProgress?.(2, 2);
              return 'done';
            },
          },
        ],
      }),
    );
    const client = newClient();
    const seen: unknown[] = [];
    const { response } = await client.request(
      { endpoint: fx.url },
      'tools/call',
      { name: 'slow', arguments: {}, _meta: { progressToken: 'p1' } },
      {
        onNotification: (n) => seen.push(n.params),
      },
    );
    expect(response).toMatchObject({ result: { content: [{ text: 'done' }] } });
    expect(seen).toEqual([
      { progressToken: 'p1', progress: 1, total: 2 },
      { progressToken: 'p1', progress: 2, total: 2 },
    ]);
  });

  it('aborts the upstream request and sends notifications/cancelled when the caller goes away', async () => {
    let release!: () => void;
    const fx = track(
      await startMcpServer({
        tools: [{ name: 'hang', handler: () => new Promise<string>((r) => (release = () => r('late'))) }],
      }),
    );
    const client = newClient();
    const controller = new AbortController();
    const pending = client.request(
      { endpoint: fx.url },
      'tools/call',
      { name: 'hang', arguments: {} },
      { signal: controller.signal },
    );
    await expect.poll(() => fx.calls.length).toBe(1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: 'aborted' });
    await expect
      .poll(() => fx.requests.some((r) => (r.body as { method?: string })?.method === 'notifications/cancelled'))
      .toBe(true);
    release();
  });
});

describe('McpUpstreamClient against a 2.x (2026-07-28) SDK server', () => {
  it('discovers the stateless revision and sends the _meta envelope and standard headers', async () => {
    const fx = track(await startMcpV2Server({ tools: echoTools }));
    const client = newClient();
    const target = { endpoint: fx.url };
    const { items } = await client.listAll(target, 'tools/list', 'tools');
    expect(items.map((t) => t.name).sort()).toEqual(['echo', 'fails']);
    expect(client.knownProtocol(target)).toBe(MODERN_PROTOCOL_VERSION);
    const { response, session } = await client.request(target, 'tools/call', { name: 'echo', arguments: { a: 1 } });
    expect(session).toEqual({ protocolVersion: MODERN_PROTOCOL_VERSION, sessionId: null });
    expect(response).toMatchObject({ result: { content: [{ text: 'echo:{"a":1}' }] } });
    const call = fx.requests.at(-1)!;
    expect(call.headers['mcp-method']).toBe('tools/call');
    expect(call.headers['mcp-name']).toBe('echo');
    expect(call.headers['mcp-protocol-version']).toBe(MODERN_PROTOCOL_VERSION);
    expect(fx.requests.some((r) => (r.body as { method?: string })?.method === 'initialize')).toBe(false);
  });
});

describe('McpUpstreamClient failures', () => {
  it('reports a dead upstream as unreachable', async () => {
    const dead = await rawServer(() => undefined);
    await dead.close();
    await expect(newClient().request({ endpoint: dead.url }, 'tools/list', {})).rejects.toMatchObject({
      kind: 'unreachable',
    });
  });

  // The upstream never answers: only the client's deadline can end the call, and a client that
  // waited on fails by this test's 30 s hang bound.
  it('times out a silent upstream, hanging up on it', { timeout: 30_000 }, async () => {
    let hungUp!: () => void;
    const upstreamSawHangUp = new Promise<void>((resolve) => (hungUp = resolve));
    const silent = await rawServer((_req, res) => void res.on('close', hungUp));
    await expect(
      newClient({ timeoutMs: 200 }).request({ endpoint: silent.url }, 'tools/list', {}),
    ).rejects.toMatchObject({ kind: 'timeout' });
    await upstreamSawHangUp;
  });

  it('refuses a response larger than the cap instead of buffering it', async () => {
    const huge = await rawServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 400 && res.write(chunk)) sent++;
        if (sent < 400) res.once('drain', pump);
        else res.end();
      };
      pump();
      req.resume();
    });
    const err = await newClient({ maxResponseBytes: 1024 * 1024 })
      .request(
        { endpoint: huge.url },
        'tools/list',
        {},
        { session: { protocolVersion: MODERN_PROTOCOL_VERSION, sessionId: null } },
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUpstreamError);
    expect((err as McpUpstreamError).kind).toBe('too_large');
  });

  it('passes an upstream JSON-RPC error on as a response', async () => {
    const fx = track(await startMcpV2Server({ tools: echoTools }));
    const { response } = await newClient().request({ endpoint: fx.url }, 'no/such-method', {});
    expect(response).toMatchObject({ error: { code: -32601 } });
  });
});

describe('McpUpstreamClient exchanges on a stateless session', () => {
  const modern = { protocolVersion: MODERN_PROTOCOL_VERSION, sessionId: null };

  /** An emitter of one 'abort' with an `aborted` flag: how a server's client connection hands its going away on. */
  class GoneEmitter extends EventEmitter {
    aborted = false;
    abort() {
      this.aborted = true;
      this.emit('abort');
    }
  }
  const callers = {
    AbortSignal: () => {
      const controller = new AbortController();
      return { signal: controller.signal, abort: () => controller.abort() };
    },
    'an abort emitter': () => {
      const emitter = new GoneEmitter();
      return { signal: emitter, abort: () => emitter.abort() };
    },
  };

  it.each(Object.entries(callers))(
    'closes the upstream request when the caller goes away, already gone included (%s)',
    async (_form, callerOf) => {
      let received = 0;
      let closed = 0;
      const hanging = await rawServer((req) => {
        received++;
        req.resume();
        req.socket.once('close', () => closed++);
      });
      const client = newClient();
      const caller = callerOf();
      const pending = client.request(
        { endpoint: hanging.url },
        'tools/call',
        { name: 'x' },
        { session: modern, signal: caller.signal },
      );
      await expect.poll(() => received).toBe(1);
      caller.abort();
      await expect(pending).rejects.toMatchObject({ kind: 'aborted' });
      await expect.poll(() => closed).toBe(1);
      await expect(
        client.request(
          { endpoint: hanging.url },
          'tools/call',
          { name: 'x' },
          { session: modern, signal: caller.signal },
        ),
      ).rejects.toMatchObject({ kind: 'aborted' });
      expect(received).toBe(1);
    },
  );

  it('reads an SSE answer up to its response, passing notifications on', async () => {
    const sse = await rawServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const { id } = JSON.parse(text) as { id: number };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } })}\n\n`,
        );
        res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { ok: true } })}\n\n`);
      });
    });
    const client = newClient();
    const seen: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { response } = await client.request(
        { endpoint: sse.url },
        'tools/call',
        { name: 'x' },
        { session: modern, onNotification: (n) => seen.push(n.method) },
      );
      expect(response).toMatchObject({ result: { ok: true } });
    }
    expect(seen).toEqual(['notifications/progress', 'notifications/progress']);
  });

  it('reads a newline-delimited JSON answer (a notification, then the response) as its messages', async () => {
    const lines = await rawServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const { id } = JSON.parse(text) as { id: number };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } })}\n`);
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } }));
      });
    });
    const seen: string[] = [];
    const { response } = await newClient().request(
      { endpoint: lines.url },
      'tools/call',
      { name: 'x' },
      { session: modern, onNotification: (n) => seen.push(n.method) },
    );
    expect(response).toMatchObject({ result: { content: [] } });
    expect(seen).toEqual(['notifications/progress']);
  });

  it('hands on the notifications of a subscriptions/listen answered as open-ended JSON lines while it stays open', async () => {
    const listen = await rawServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(
          `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: {} })}\n`,
        );
        res.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n`);
      });
    });
    const seen: string[] = [];
    const controller = new AbortController();
    const pending = newClient().request(
      { endpoint: listen.url },
      'subscriptions/listen',
      { notifications: { toolsListChanged: true } },
      { session: modern, signal: controller.signal, onNotification: (n) => seen.push(n.method) },
    );
    await expect
      .poll(() => seen)
      .toEqual(['notifications/subscriptions/acknowledged', 'notifications/tools/list_changed']);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: 'aborted' });
  });
});

describe('McpUpstreamClient with an injected dispatcher', () => {
  it('keeps the connect failure as the cause (e.g. an egress refusal)', async () => {
    const { createEgressDispatcher, egressRefusalOf } = await import('@agentgw/core');
    const client = newClient({
      dispatcher: createEgressDispatcher({ mode: 'public-only', allowCidrs: [], allowHosts: new Set() }),
    });
    const err = await client.request({ endpoint: 'http://127.0.0.1:9/mcp' }, 'tools/list', {}).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'unreachable' });
    expect(egressRefusalOf(err)?.code).toBe('EGRESS_REFUSED');
  });
});

describe("McpUpstreamClient.listen: how a session upstream's server stream ends", () => {
  const session = { sessionId: 'up-1', protocolVersion: '2025-11-25' };
  const answering = async (status: number) => {
    const fx = await rawServer((_req, res) => res.writeHead(status, { 'content-type': 'application/json' }).end('{}'));
    return newClient().listen({ endpoint: fx.url }, session, () => {}, new AbortController().signal);
  };

  it('is unsupported when the upstream has no stream for the session (405, 404, 400)', async () => {
    expect(await answering(405)).toBe('unsupported');
    expect(await answering(404)).toBe('unsupported');
    expect(await answering(400)).toBe('unsupported');
  });

  it('failed, worth another try, when the stream cannot open now (409 while another holds it, 429, 503, no connection)', async () => {
    expect(await answering(409)).toBe('failed');
    expect(await answering(429)).toBe('failed');
    expect(await answering(503)).toBe('failed');
    const refused = await newClient().listen(
      { endpoint: 'http://127.0.0.1:9/mcp' },
      session,
      () => {},
      new AbortController().signal,
    );
    expect(refused).toBe('failed');
  });

  it('ended once an open stream closes', async () => {
    const fx = await rawServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(': hi\n\n'),
    );
    expect(await newClient().listen({ endpoint: fx.url }, session, () => {}, new AbortController().signal)).toBe(
      'ended',
    );
  });
});
