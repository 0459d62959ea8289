import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { McpFixture, McpFixtureOptions, McpFixtureRequest, McpToolCall } from './mcp-server.js';

export interface McpV2FixtureOptions extends Omit<McpFixtureOptions, 'setup'> {
  /** `reject` (default): 2026-07-28 only, as a current server; `stateless`: also 2025-era requests, one fresh instance each. */
  legacy?: 'reject' | 'stateless';
}

/**
 * A real MCP SDK 2.x server (`createMcpHandler`, protocol revision 2026-07-28: stateless, no
 * initialize, `server/discover`) on 127.0.0.1 with a random port, recording every request and
 * tool call like the 1.x fixture.
 */
export async function startMcpV2Server(options: McpV2FixtureOptions): Promise<McpFixture> {
  const calls: McpToolCall[] = [];
  const requests: McpFixtureRequest[] = [];

  const handler = createMcpHandler(
    (ctx) => {
      const headers = Object.fromEntries(ctx.requestInfo?.headers ?? []) as IncomingHttpHeaders;
      const server = new McpServer({ name: options.name ?? 'testkit-mcp-v2', version: '2.0.0' });
      for (const tool of options.tools) {
        server.registerTool(
          tool.name,
          {
            description: tool.description,
            inputSchema: tool.inputSchema ? z.object(tool.inputSchema) : z.looseObject({}),
          },
          async (args: Record<string, unknown>) => {
            const call: McpToolCall = { tool: tool.name, arguments: args, headers };
            calls.push(call);
            const result = await tool.handler(args, call);
            return typeof result === 'string' ? { content: [{ type: 'text' as const, text: result }] } : result;
          },
        );
      }
      return server;
    },
    { legacy: options.legacy ?? 'reject' },
  );

  const listener = getRequestListener(async (request) => {
    const body = request.method === 'POST' ? await request.clone().text() : '';
    let parsed: unknown;
    try {
      parsed = body.length > 0 ? JSON.parse(body) : undefined;
    } catch {
      parsed = body;
    }
    requests.push({ method: request.method, headers: Object.fromEntries(request.headers), body: parsed });
    const auth = options.auth;
    if (
      (auth?.bearer !== undefined && request.headers.get('authorization') !== `Bearer ${auth.bearer}`) ||
      (auth?.apiKey !== undefined && request.headers.get('x-api-key') !== auth.apiKey)
    ) {
      return Response.json(
        { jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized' }, id: null },
        { status: 401 },
      );
    }
    return handler.fetch(request);
  });

  // Hono's listener answers a throw with a 500 itself; its promise has nothing left to report.
  const http = createServer((req, res) => void listener(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    requests,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
