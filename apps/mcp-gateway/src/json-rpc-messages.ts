import { JSON_RPC, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '@agentgw/mcp-client';

/** One element of a POST body, classified. */
export type Incoming =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  /** A client's answer to a server request the gateway relayed (`relay/`), routed back to the upstream that asked. */
  | { kind: 'response'; message: JsonRpcResponse }
  | { kind: 'invalid'; id: string | number | null; code: number; message: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Validates a JSON-RPC 2.0 message as MCP uses it (params, when present, is an object). */
export function classify(value: unknown): Incoming {
  if (!isObject(value))
    return {
      kind: 'invalid',
      id: null,
      code: JSON_RPC.INVALID_REQUEST,
      message: 'A JSON-RPC message must be an object',
    };
  const rawId = value.id;
  const idOk =
    rawId === undefined || typeof rawId === 'string' || (typeof rawId === 'number' && Number.isFinite(rawId));
  const id = idOk && rawId !== undefined ? rawId : null;
  if (value.jsonrpc !== '2.0')
    return { kind: 'invalid', id, code: JSON_RPC.INVALID_REQUEST, message: 'jsonrpc must be "2.0"' };
  if (!idOk)
    return { kind: 'invalid', id: null, code: JSON_RPC.INVALID_REQUEST, message: 'id must be a string or a number' };
  if (value.method === undefined) {
    if (rawId !== undefined && ('result' in value || 'error' in value)) return classifyResponse(value, rawId);
    return { kind: 'invalid', id, code: JSON_RPC.INVALID_REQUEST, message: 'method is required' };
  }
  if (typeof value.method !== 'string' || value.method === '') {
    return { kind: 'invalid', id, code: JSON_RPC.INVALID_REQUEST, message: 'method must be a non-empty string' };
  }
  if (value.params !== undefined && !isObject(value.params)) {
    return { kind: 'invalid', id, code: JSON_RPC.INVALID_PARAMS, message: 'params must be an object' };
  }
  const params = value.params;
  if (rawId === undefined)
    return { kind: 'notification', message: { jsonrpc: '2.0', method: value.method, ...(params ? { params } : {}) } };
  return {
    kind: 'request',
    message: { jsonrpc: '2.0', id: rawId, method: value.method, ...(params ? { params } : {}) },
  };
}

/** A client's response: a result object, or an error with a numeric code and a message (nothing else is passed on upstream). */
function classifyResponse(value: Record<string, unknown>, id: string | number): Incoming {
  if ('result' in value && !('error' in value) && isObject(value.result))
    return { kind: 'response', message: { jsonrpc: '2.0', id, result: value.result } };
  const error = value.error;
  if (
    !('result' in value) &&
    isObject(error) &&
    typeof error.code === 'number' &&
    Number.isInteger(error.code) &&
    typeof error.message === 'string'
  ) {
    const message: JsonRpcResponse = {
      jsonrpc: '2.0',
      id,
      error: { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) },
    };
    return { kind: 'response', message };
  }
  return {
    kind: 'invalid',
    id,
    code: JSON_RPC.INVALID_REQUEST,
    message: 'A response needs a result object or an error with a code and a message',
  };
}

/** The `_meta` object of a message's params, if any. */
export function metaOf(params: Record<string, unknown> | undefined): Record<string, unknown> {
  const meta = params?._meta;
  return isObject(meta) ? meta : {};
}
