import { META_LOG_LEVEL, META_SERVER_INFO, MODERN_PROTOCOL_VERSION } from '@agentgw/mcp-client';
import { LIST_METHODS, type ListItem } from './provider-view/list-items.js';

/** The `_meta` key a client may carry an approval token in. */
export const CONFIRMATION_TOKEN_META = 'agentgw/confirmationToken';

/** How the gateway names itself to MCP clients (initialize, 2026-07-28 result `_meta`). */
export const SERVER_INFO = { name: 'agentgw-mcp-gateway', version: '1.0.0' };

type Result = Record<string, unknown>;

/** The params sent upstream: the client's own, without the gateway-facing `_meta` keys (the client adds its envelope). */
export function upstreamParams(params: Result): Result {
  const meta = params._meta;
  if (typeof meta !== 'object' || meta === null) return params;
  // The log level travels on: a 2026-07-28 upstream logs to a request only when it names one.
  const kept = Object.fromEntries(
    Object.entries(meta).filter(
      ([key]) =>
        key === META_LOG_LEVEL || (!key.startsWith('io.modelcontextprotocol/') && key !== CONFIRMATION_TOKEN_META),
    ),
  );
  const { _meta: _dropped, ...rest } = params;
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
}

/** Shapes a result for the client's revision: 2026-07-28 results carry `resultType` (and cache fields on lists); older ones do not. */
export function resultForClient(method: string, result: Result, protocolVersion: string): Result {
  if (protocolVersion === MODERN_PROTOCOL_VERSION) {
    // The added keys come before the spread: adding keys to a spread copy afterwards costs V8 several times more.
    // An interim (input_required) result is never cacheable and carries no hints.
    const cacheable =
      (LIST_RESULT_METHODS.has(method) || method === 'resources/read' || method === 'server/discover') &&
      result.resultType !== 'input_required';
    const out: Result = cacheable
      ? { resultType: null, ttlMs: null, cacheScope: null, _meta: null, ...result }
      : { resultType: null, _meta: null, ...result };
    out.resultType ??= 'complete';
    if (cacheable) {
      // A shared gateway answers per identity (policy filters lists, reads go out as the caller):
      // private always, and never fresher than the upstream said (a merged list has no upstream TTL: 0).
      out.ttlMs = typeof out.ttlMs === 'number' && Number.isSafeInteger(out.ttlMs) && out.ttlMs > 0 ? out.ttlMs : 0;
      out.cacheScope = 'private';
    }
    if (method === 'tools/list' && Array.isArray(out.tools))
      out.tools = (out.tools as ListItem[]).map(withoutExecution);
    const meta = result._meta;
    out._meta =
      typeof meta === 'object' && meta !== null ? { ...meta, [META_SERVER_INFO]: SERVER_INFO } : SERVER_INFO_META;
    return out;
  }
  if (!('resultType' in result || 'ttlMs' in result || 'cacheScope' in result)) return result;
  const { resultType: _r, ttlMs: _t, cacheScope: _c, ...legacy } = result;
  return legacy;
}

/** The result `_meta` naming the gateway, shared by every answer without upstream `_meta` (serialised, never changed). */
const SERVER_INFO_META: Readonly<Result> = Object.freeze({ [META_SERVER_INFO]: SERVER_INFO });

/** A tool as 2026-07-28 lists it (without the `execution` field of earlier revisions); copied only when there is one to drop. */
const withoutExecution = (tool: ListItem): ListItem => {
  if (!('execution' in tool)) return tool;
  const { execution: _execution, ...rest } = tool;
  return rest;
};

const LIST_RESULT_METHODS = new Set(Object.values(LIST_METHODS));
