import { SseParser } from '../src/sse.js';

/**
 * A minimal MCP Streamable HTTP client for the e2e: an agent calling the gateway's unified MCP
 * endpoint with its runtime token, so a `require_confirmation` call is really held by the gateway.
 */
export async function openMcpSession(
  baseUrl: string,
  runtimeToken: string,
): Promise<{
  callTool(name: string, args: Record<string, unknown>): Promise<{ status: number; message: Record<string, unknown> }>;
}> {
  const endpoint = `${baseUrl}/api/v1/mcp/mcp`;
  let sessionId: string | null = null;
  let nextId = 1;

  const send = async (
    body: Record<string, unknown>,
  ): Promise<{ status: number; message: Record<string, unknown> | null }> => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${runtimeToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    };
    if (sessionId) headers['mcp-session-id'] = sessionId;
    const response = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body) });
    sessionId = response.headers.get('mcp-session-id') ?? sessionId;
    const text = await response.text();
    if (!text.trim()) return { status: response.status, message: null };
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      // The answer is the event carrying a JSON-RPC message with our id (progress notices come first).
      const messages = new SseParser().push(`${text}\n\n`).map((e) => JSON.parse(e.data) as Record<string, unknown>);
      const answer = messages.find((m) => 'result' in m || 'error' in m) ?? null;
      return { status: response.status, message: answer };
    }
    return { status: response.status, message: JSON.parse(text) as Record<string, unknown> };
  };

  const init = await send({
    jsonrpc: '2.0',
    id: nextId++,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'dashboard-e2e', version: '1.0.0' },
    },
  });
  if (init.status !== 200 || !init.message || !('result' in init.message))
    throw new Error(`MCP initialize failed: ${init.status} ${JSON.stringify(init.message)}`);
  await send({ jsonrpc: '2.0', method: 'notifications/initialized' });

  return {
    async callTool(name, args) {
      const answer = await send({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'tools/call',
        params: { name, arguments: args },
      });
      return { status: answer.status, message: answer.message ?? {} };
    },
  };
}
