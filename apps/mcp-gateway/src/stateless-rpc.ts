import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';

/** One JSON-RPC answer as a test reads it: the HTTP status and the parsed body. */
export interface RpcReply {
  status: number;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };
}

/**
 * Sends one stateless (2026-07-28) JSON-RPC request to an MCP endpoint of the gateway under test,
 * so a test drives the real HTTP interface without an SDK session in the way; the client declares
 * `clientCapabilities` (none unless given). The response is left unread (a stream, a status).
 */
export function statelessRequest(
  url: string,
  headers: Record<string, string>,
  method: string,
  params: Record<string, unknown> = {},
  clientCapabilities: Record<string, unknown> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: { [META_PROTOCOL_VERSION]: MODERN_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: clientCapabilities },
      },
    }),
  });
}

/** statelessRequest, its JSON answer read. */
export async function statelessRpc(
  url: string,
  headers: Record<string, string>,
  method: string,
  params: Record<string, unknown> = {},
  clientCapabilities: Record<string, unknown> = {},
): Promise<RpcReply> {
  const res = await statelessRequest(url, headers, method, params, clientCapabilities);
  return { status: res.status, body: (await res.json()) as RpcReply['body'] };
}

/** The names of a tools/list result. */
export const toolNames = (reply: RpcReply): string[] =>
  ((reply.body.result?.tools ?? []) as { name: string }[]).map((t) => t.name).sort();
