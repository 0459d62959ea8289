import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Json } from './gateway-api.js';

/** The 1.x SDK client (session revisions: initialize, Mcp-Session-Id). */
export async function connectV1(url: string, headers: Record<string, string>): Promise<ClientV1> {
  const client = new ClientV1({ name: 'e2e-v1', version: '1.0.0' });
  await client.connect(new TransportV1(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The 2.x SDK client pinned to the stateless 2026-07-28 revision. */
export async function connectV2(url: string, headers: Record<string, string>): Promise<ClientV2> {
  const client = new ClientV2(
    { name: 'e2e-v2', version: '2.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new TransportV2(new URL(url), { requestInit: { headers } }));
  return client;
}

/** Text of a tool result's first content item. */
export const textOf = (result: unknown): string => (result as { content: { text: string }[] }).content[0]!.text;

let sequence = 0;

/**
 * One plain JSON-RPC POST with credentials and nothing else — no initialize, no session, no
 * revision header or `_meta` — as the spec's examples send it (served sessionless at 2025-11-25).
 */
export async function sessionlessRpc(
  url: string,
  headers: Record<string, string>,
  method: string,
  params: Record<string, unknown> = {},
): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++sequence, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: Json = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (an SSE answer or the router's error page): keep the text for the failure message
  }
  return { status: res.status, body };
}

/**
 * One stateless (2026-07-28) `tools/call` as plain HTTP, for status codes and for the fault runs'
 * many concurrent calls: the HTTP status, the JSON-RPC answer, or the transport error.
 */
export async function rawToolsCall(
  url: string,
  headers: Record<string, string>,
  name: string,
  args: Record<string, unknown>,
  timeoutMs = 30_000,
): Promise<{ status: number; body: Json } | { error: string }> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        accept: 'application/json',
        'mcp-protocol-version': '2026-07-28',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++sequence,
        method: 'tools/call',
        params: {
          name,
          arguments: args,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let body: Json = text;
    try {
      body = JSON.parse(text);
    } catch {
      // an HTML error page from the router: keep the text
    }
    return { status: res.status, body };
  } catch (error) {
    return { error: (error as Error).name === 'TimeoutError' ? 'timeout' : String((error as Error).message) };
  }
}
