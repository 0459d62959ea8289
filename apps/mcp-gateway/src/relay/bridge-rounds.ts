import type { JsonRpcResponse } from '@agentgw/mcp-client';
import type { McpResult } from '../mcp-context.js';
import { invalidParams, RpcError } from '../rpc-errors.js';
import type { BridgeEvent } from './bridge-store.js';
import { BRIDGE_STATE_PREFIX } from './bridge-state.js';

/** An input_required round asking the client the questions of `events` (keyed by their relay ids). */
export function roundOf(id: string, events: readonly BridgeEvent[]): McpResult {
  const inputRequests: Record<string, unknown> = {};
  for (const event of events)
    if (event.kind === 'asked')
      inputRequests[event.id] = { method: event.method, ...(event.params ? { params: event.params } : {}) };
  return { resultType: 'input_required', inputRequests, requestState: BRIDGE_STATE_PREFIX + id };
}

/** A bridged call's end as the retry answers it. */
export function endOf(end: Exclude<BridgeEvent, { kind: 'asked' }>): McpResult {
  if (end.kind === 'result') return end.result;
  const { code, message, data } = end.error;
  const detail = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined;
  throw new RpcError(code, message, end.status, detail);
}

/** The retry's `inputResponses` as answers to the relayed requests they are keyed by (-32602 when not a map of results). */
export function responsesOf(value: unknown): JsonRpcResponse[] {
  if (value === undefined) return [];
  if (!isObject(value)) throw invalidParams('inputResponses must be an object');
  return Object.entries(value).map(([key, result]) => {
    if (!isObject(result)) throw invalidParams(`inputResponses.${key.slice(0, 100)} must be an object`);
    return { jsonrpc: '2.0', id: key, result };
  });
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
