/**
 * The MCP vocabulary both sides of the gateway share: protocol versions, the 2026-07-28
 * per-request `_meta` envelope keys and the JSON-RPC 2.0 message shapes.
 */

/** The stateless revision: no initialize, no session, the version in every request's `_meta`. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Session revisions (initialize + Mcp-Session-Id), newest first. */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

/** Every revision the gateway speaks, newest first (what `server/discover` advertises). */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION, ...LEGACY_PROTOCOL_VERSIONS];

/** The version a session client gets when it asks for one we do not speak (as the spec's negotiation says). */
export const LATEST_LEGACY_VERSION = LEGACY_PROTOCOL_VERSIONS[0];

/** Only 2025-03-26 allowed JSON-RPC batches; later revisions removed them. */
export const BATCH_PROTOCOL_VERSION = '2025-03-26';

/** The version a session request without `MCP-Protocol-Version` is assumed to speak (Streamable HTTP's rule). */
export const DEFAULT_ASSUMED_VERSION = '2025-03-26';

/** The 2026-07-28 request `_meta` envelope keys (and the server's identity on results). */
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** Methods whose 2026-07-28 results must carry `ttlMs` and `cacheScope`. */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
]);

/**
 * Which era a conversation with an upstream prefers where the upstream speaks both: `modern`
 * (2026-07-28, stateless; the default) or `legacy` (a session revision: what a legacy client's
 * features — logging/setLevel, resources/subscribe, server requests on streams — need).
 */
export type UpstreamEra = 'modern' | 'legacy';

/** The upstream era that serves a client of `clientVersion` without losing features. */
export const upstreamEraFor = (clientVersion: string): UpstreamEra =>
  isModernVersion(clientVersion) ? 'modern' : 'legacy';

/** True for 2026-07-28 and later (stateless) revisions. */
export const isModernVersion = (version: string): boolean => version >= MODERN_PROTOCOL_VERSION;

/** True when the gateway speaks `version`. */
export const isSupportedVersion = (version: string): boolean => SUPPORTED_PROTOCOL_VERSIONS.includes(version);

/** JSON-RPC 2.0 as MCP uses it (params and results are objects). */
export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId | null; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id: JsonRpcId | null; error: JsonRpcErrorObject };

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** The standard JSON-RPC and MCP error codes the gateway answers with. */
export const JSON_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Implementation-defined server errors (-32000..-32099). */
  SERVER_ERROR: -32000,
  /** 2026-07-28: the `Mcp-*` headers disagree with the body (HTTP 400). */
  HEADER_MISMATCH: -32020,
  /** 2026-07-28: the request needs a client capability its `_meta` did not declare (HTTP 400). */
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
} as const;

/** Methods 2026-07-28 removed (the session handshake, and what `_meta` and `subscriptions/listen` replaced): on that wire, 404 `-32601`. */
export const REMOVED_MODERN_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);

/** The `_meta` key a 2026-07-28 request names its log level in (no level: no `notifications/message`). */
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON-RPC response (result or error) to one of our requests. */
export function isJsonRpcResponse(value: unknown): value is JsonRpcResponse {
  return (
    isObject(value) &&
    value.jsonrpc === '2.0' &&
    'id' in value &&
    ('result' in value || 'error' in value) &&
    !('method' in value)
  );
}

/** A notification carried on a response stream (no id). */
export function isJsonRpcNotification(value: unknown): value is JsonRpcNotification {
  return isObject(value) && value.jsonrpc === '2.0' && typeof value.method === 'string' && !('id' in value);
}

/** A request (an id and a method): on a response stream, one the server sends the client (sampling, elicitation, roots). */
export function isJsonRpcRequest(value: unknown): value is JsonRpcRequest {
  return (
    isObject(value) &&
    value.jsonrpc === '2.0' &&
    typeof value.method === 'string' &&
    (typeof value.id === 'string' || (typeof value.id === 'number' && Number.isFinite(value.id)))
  );
}
