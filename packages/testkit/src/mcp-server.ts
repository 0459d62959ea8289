import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { readBody } from './read-body.js';

export interface McpToolCall {
  tool: string;
  arguments: Record<string, unknown>;
  /** The HTTP headers of the request that carried the call (to assert on forwarded identity/auth). */
  headers: IncomingHttpHeaders;
  /** Sends a `notifications/progress` for this call when the caller sent a progress token. */
  sendProgress?: (progress: number, total?: number) => Promise<void>;
  /** Aborted when the caller cancels the call (`notifications/cancelled`) or its connection drops. */
  signal?: AbortSignal;
}

export interface McpFixtureTool {
  name: string;
  description?: string;
  inputSchema?: z.ZodRawShape;
  /** A string reply becomes one text content item. */
  handler: (
    args: Record<string, unknown>,
    call: McpToolCall,
  ) => CallToolResult | string | Promise<CallToolResult | string>;
}

export interface McpFixtureRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface McpFixture {
  /** The Streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp */
  url: string;
  calls: McpToolCall[];
  /** Every HTTP request that reached the endpoint, accepted or not. */
  requests: McpFixtureRequest[];
  close(): Promise<void>;
}

export interface McpFixtureOptions {
  tools: McpFixtureTool[];
  name?: string;
  /** When set, requests must carry `Authorization: Bearer <bearer>` and/or `X-API-Key: <apiKey>`, else 401. */
  auth?: { bearer?: string; apiKey?: string };
  /** Registers more on each session's server (resources, prompts, …) beside the tools. */
  setup?: (server: McpServer) => void;
}

/**
 * A real MCP SDK server (McpServer + StreamableHTTPServerTransport, stateful sessions) on
 * 127.0.0.1 with a random port, recording every request and tool call for assertions.
 */
export async function startMcpServer(options: McpFixtureOptions): Promise<McpFixture> {
  const calls: McpToolCall[] = [];
  const requests: McpFixtureRequest[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const newSession = async (): Promise<StreamableHTTPServerTransport> => {
    const server = new McpServer({ name: options.name ?? 'testkit-mcp', version: '1.0.0' });
    for (const tool of options.tools) {
      server.registerTool(
        tool.name,
        { description: tool.description, inputSchema: tool.inputSchema ?? {} },
        async (args: Record<string, unknown>, extra) => {
          const progressToken = extra._meta?.progressToken;
          const call: McpToolCall = {
            tool: tool.name,
            arguments: args,
            headers: extra.requestInfo?.headers ?? {},
            signal: extra.signal,
            sendProgress: async (progress, total) => {
              if (progressToken === undefined) return;
              await extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress, total },
              });
            },
          };
          calls.push(call);
          const result = await tool.handler(args, call);
          return typeof result === 'string' ? { content: [{ type: 'text', text: result }] } : result;
        },
      );
    }
    options.setup?.(server);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    requests.push({ method: req.method ?? 'GET', headers: req.headers, body });

    if (!authorized(req.headers, options.auth)) {
      return replyJsonRpcError(res, 401, -32001, 'Unauthorized');
    }
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined) return replyJsonRpcError(res, 404, -32001, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return replyJsonRpcError(res, 400, -32000, 'Bad Request: no valid session id');
      }
      transport = await newSession();
    }
    await transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) replyJsonRpcError(res, 500, -32603, 'Internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    requests,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function authorized(headers: IncomingHttpHeaders, auth: McpFixtureOptions['auth']): boolean {
  if (auth?.bearer !== undefined && headers.authorization !== `Bearer ${auth.bearer}`) return false;
  if (auth?.apiKey !== undefined && headers['x-api-key'] !== auth.apiKey) return false;
  return true;
}

function replyJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
