import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { McpUpstreamClient } from './upstream-client.js';

/** One message a fixture upstream received: the HTTP method, its headers and (for a POST) the parsed body. */
export interface SeenRequest {
  method: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | null;
}

/** What a test decides for a tools/call POST or a GET: the raw answer. */
export type StreamHandler = (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown> | null) => void;

/**
 * A bare 2025-11-25 session upstream on loopback for stream tests: it refuses `server/discover`,
 * answers `initialize` with session `s-1`, accepts notifications and responses (202), and leaves
 * every other POST and every GET to `handler`, recording all it saw.
 */
export async function startLegacyStreamUpstream(
  handler: StreamHandler,
): Promise<{ url: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const http = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = text === '' ? null : (JSON.parse(text) as Record<string, unknown>);
      seen.push({ method: req.method ?? '', headers: req.headers, body });
      if (req.method === 'GET') return handler(req, res, null);
      if (body?.method === 'server/discover') return void res.writeHead(400).end();
      if (body?.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' });
        return void res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'raw', version: '1' } },
          }),
        );
      }
      if (body && body.id === undefined) return void res.writeHead(202).end();
      if (body && body.method === undefined) return void res.writeHead(202).end();
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((r) => http.close(() => r()));
    },
  };
}

/** Opens an SSE answer. */
export const sseHead = (res: ServerResponse): void =>
  void res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });

/** One SSE event carrying a JSON-RPC message, with an optional id. */
export const sseMessage = (message: unknown, id?: string): string =>
  `${id === undefined ? '' : `id: ${id}\n`}event: message\ndata: ${JSON.stringify(message)}\n\n`;

/**
 * Clients and fixture upstreams a test file opens, each closed after every test (so a failing test
 * leaves no socket behind): call once at the top of the file, then open them through what it returns.
 */
export function closedAfterEachTest(): {
  newClient(): McpUpstreamClient;
  start(handler: StreamHandler): ReturnType<typeof startLegacyStreamUpstream>;
} {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  return {
    newClient() {
      const client = new McpUpstreamClient();
      closers.push(() => client.destroy());
      return client;
    },
    async start(handler) {
      const upstream = await startLegacyStreamUpstream(handler);
      closers.push(upstream.close);
      return upstream;
    },
  };
}
