import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedAgent, startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { recordingAuditTrail, type RecordedAudit } from './testing/recorded-audits.js';

// A client that stops reading a call's SSE answer while its upstream floods it with progress: over
// real sockets, through the whole gateway (shell, MCP transport, tools/call, MCP client, the
// upstream's SSE read). The gateway reads the upstream as fast as it sends, so what the client does
// not read must be dropped (notifications only), not held: respond.ts bounds it at 1 MiB unread.

const NOTE = 'x'.repeat(1024);
// ~7.9 MB of progress with its framing: under the MCP client's 8 MiB cap on one upstream answer.
const SENT = 7000;
const UPSTREAM_PROTOCOL = '2025-06-18';

/** A hand-written MCP upstream: one tool whose call answers as SSE with SENT progress notifications, then its result. */
function floodingUpstream(): { server: Server; flooded: Promise<void> } {
  let done!: () => void;
  const flooded = new Promise<void>((resolve) => (done = resolve));
  const server = createServer((req, res) => void answer(req, res, done));
  return { server, flooded };
}

async function answer(req: IncomingMessage, res: ServerResponse, done: () => void): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    id?: number | string;
    method: string;
    params?: { _meta?: { progressToken?: unknown } };
  };
  const reply = (result: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  };
  if (message.id === undefined) return void res.writeHead(202).end();
  if (message.method === 'initialize')
    return reply({
      protocolVersion: UPSTREAM_PROTOCOL,
      capabilities: { tools: {} },
      serverInfo: { name: 'flood', version: '1' },
    });
  if (message.method === 'tools/list')
    return reply({ tools: [{ name: 'flood', inputSchema: { type: 'object', properties: {} } }] });
  if (message.method !== 'tools/call') return reply({});
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const progressToken = message.params?._meta?.progressToken ?? 'p';
  for (let i = 1; i <= SENT; i++) {
    const data = {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken, progress: i, message: NOTE },
    };
    // As a real server does: it waits while the gateway has not taken what it sent.
    if (!res.write(`event: message\ndata: ${JSON.stringify(data)}\n\n`))
      await Promise.race([once(res, 'drain'), once(res, 'close')]);
  }
  res.end(
    `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`,
  );
  done();
}

let gw: GatewayUnderTest;
let upstream: ReturnType<typeof floodingUpstream>;
let token: string;
const audits: RecordedAudit[] = [];
/** What the running test waits on among the recorded audit writes. */
let onRecord: (audit: RecordedAudit) => void = () => {};

beforeAll(async () => {
  upstream = floodingUpstream();
  upstream.server.listen(0, '127.0.0.1');
  await once(upstream.server, 'listening');
  const { port } = upstream.server.address() as AddressInfo;
  gw = await startGatewayUnderTest({ audit: () => recordingAuditTrail(audits, (a) => onRecord(a)) });
  const provider = await gw.catalog.providers.create(gw.admin, {
    name: 'flood',
    pattern: 'flood',
    endpoint: `http://127.0.0.1:${port}/mcp`,
    authType: 'none',
    priority: 0,
  });
  ({ token } = await allowedAgent(gw, provider.id, 'flood-bot'));
});

afterAll(async () => {
  await gw?.close();
  upstream?.server.close();
});

/** POSTs the call; the answer's body is left unread until `read` is called. */
async function callWithoutReading(): Promise<{ read: () => Promise<string>; contentType: string }> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 42,
    method: 'tools/call',
    params: { name: 'flood', arguments: {}, _meta: { progressToken: 'flood-1' } },
  });
  const req = request(`${gw.url}/api/v1/mcp/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': UPSTREAM_PROTOCOL,
    },
  });
  req.end(body);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.pause();
  return {
    contentType: String(res.headers['content-type']),
    read: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

describe('a client that stops reading a flooded SSE answer', () => {
  it('gets the answer, with the notifications past the bound dropped rather than held', async () => {
    const completed = new Promise<void>((resolve) => {
      onRecord = (a) => {
        if (a.patch?.status === 'completed') resolve();
      };
    });
    const answer = await callWithoutReading();
    expect(answer.contentType).toContain('text/event-stream');
    // The upstream finishes sending although the client reads nothing, and the gateway reads its
    // answer (the call's outcome is recorded when it does): every notification before it was handled.
    await upstream.flooded;
    await completed;
    const messages = (await answer.read())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { id?: unknown; method?: string; result?: unknown });
    const progress = messages.filter((m) => m.method === 'notifications/progress');
    // What arrived: the 1 MiB the gateway keeps unread, plus what the loopback sockets' kernel buffers
    // took before the client's stopped (~4 MB here: the send buffer grows to tcp_wmem's 4 MiB cap);
    // without the drop, all of it.
    expect(progress.length).toBeGreaterThan(900);
    expect(progress.length).toBeLessThan(SENT * 0.8);
    expect(messages.at(-1)).toEqual({ jsonrpc: '2.0', id: 42, result: { content: [{ type: 'text', text: 'done' }] } });
  }, 60_000);
});
