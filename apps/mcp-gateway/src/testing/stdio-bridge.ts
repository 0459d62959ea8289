import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';

/** A stdio MCP server served over Streamable HTTP: its URL and how to stop both. */
export interface BridgedServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts an npm MCP server package's `bin` over stdio and serves it on loopback Streamable HTTP
 * (stateless, as a stdio bridge does), so the gateway can register a stdio-only server such as
 * server-memory. Each HTTP request gets a Server that declares exactly the stdio server's own
 * capabilities and passes every request other than initialize and ping through to it.
 */
export async function startStdioBridge(
  pkg: string,
  args: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<BridgedServer> {
  const manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string | Record<string, string> };
  const binPath = typeof bin === 'string' ? bin : Object.values(bin)[0]!;
  const upstream = new Client({ name: 'stdio-bridge', version: '1.0.0' });
  await upstream.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(dirname(manifest), binPath), ...args],
      env: { PATH: process.env.PATH ?? '', ...env },
      stderr: 'ignore',
    }),
  );
  const capabilities = upstream.getServerCapabilities() ?? {};
  const info = upstream.getServerVersion() ?? { name: pkg, version: '0' };
  const http = createServer((req: IncomingMessage, res) => {
    const server = new Server(info, { capabilities });
    server.fallbackRequestHandler = (request) =>
      upstream.request({ method: request.method, params: request.params }, ResultSchema);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await upstream.close();
    },
  };
}
