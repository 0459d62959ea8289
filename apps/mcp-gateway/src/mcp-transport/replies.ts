import type { JsonRpcResponse } from '@agentgw/mcp-client';

/** The header a legacy (2024-11-05 … 2025-11-25) session travels in. */
export const SESSION_HEADER = 'mcp-session-id';

/** An answer decided before any method ran: a JSON-RPC body and its HTTP status. */
export interface Reply {
  body: unknown;
  status: number;
  headers?: Record<string, string>;
}

/** Extra headers of an answer outside a session: shared, never written to. */
export const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** A JSON-RPC error response (`data` only when given). */
export const rpcError = (
  id: string | number | null,
  code: number,
  message: string,
  data?: Record<string, unknown>,
): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code, message, ...(data ? { data } : {}) },
});

/** A refusal before any method ran: `rpcError(null, …)` with its HTTP status. */
export const refusal = (status: number, code: number, message: string, data?: Record<string, unknown>): Reply => ({
  body: rpcError(null, code, message, data),
  status,
});

/** A JSON answer: the body serialised once, into the adapter's cached-response fast path (string body, plain headers). */
export function jsonResponse(
  body: unknown,
  status: number,
  headers: Readonly<Record<string, string>> = NO_HEADERS,
): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A `Reply` as its JSON answer. */
export const replyResponse = (reply: Reply): Response => jsonResponse(reply.body, reply.status, reply.headers);

/**
 * The headers of a single answer: a 429 refusal (a quota, or too many calls held for confirmation)
 * also says when to come back, as every other 429 of the gateway does.
 */
export function answerHeaders(
  response: JsonRpcResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  if (status !== 429 || !('error' in response)) return headers;
  const retryAfter = (response.error.data as { retryAfter?: unknown } | undefined)?.retryAfter;
  return typeof retryAfter === 'number' ? { ...headers, 'retry-after': String(retryAfter) } : headers;
}
