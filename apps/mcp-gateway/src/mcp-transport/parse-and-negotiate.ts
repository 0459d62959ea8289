import {
  BATCH_PROTOCOL_VERSION,
  DEFAULT_ASSUMED_VERSION,
  isModernVersion,
  isSupportedVersion,
  JSON_RPC,
  LATEST_LEGACY_VERSION,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  REMOVED_MODERN_METHODS,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JsonRpcRequest,
} from '@agentgw/mcp-client';
import { classify, metaOf, type Incoming } from '../json-rpc-messages.js';
import { refusal, rpcError, type Reply } from './replies.js';
import { headerMismatch } from './request-headers.js';

/** Messages one JSON-RPC batch (2025-03-26) may hold; a longer one is refused whole (400, -32600). */
export const MAX_BATCH_MESSAGES = 20;

/** A message that is not a valid JSON-RPC request (answered with its own error). */
export type Invalid = Extract<Incoming, { kind: 'invalid' }>;
/** A JSON-RPC request of the body (answered by the method router). */
export type RequestItem = Extract<Incoming, { kind: 'request' }>;
type Call = Extract<Incoming, { kind: 'request' | 'notification' }>;

/** A POST body read as JSON-RPC: its messages and the first request or notification (what the revision and the log go by). */
export interface ParsedPost {
  batch: boolean;
  items: Incoming[];
  first: Call | undefined;
}

/** How a parsed POST goes on: answered already, `initialize`, a stateless revision, or the session its header names. */
export type Negotiated =
  | { kind: 'reply'; reply: Reply }
  | { kind: 'initialize'; request: JsonRpcRequest }
  | { kind: 'stateless'; protocolVersion: string }
  | { kind: 'session'; id: string };

const badRequest = (message: string, data?: Record<string, unknown>) =>
  refusal(400, JSON_RPC.INVALID_REQUEST, message, data);

/** A request's header, by lower-case name (null when absent). */
export type HeaderOf = (name: string) => string | null;

/**
 * The body as JSON-RPC messages, or the 400 for a body that is not JSON, an over-long or empty
 * batch, or a single invalid message. (An unsupported `MCP-Protocol-Version` is refused by
 * `negotiateRevision`, which knows the request id.)
 */
export function parsePost(text: string): ParsedPost | Reply {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refusal(400, JSON_RPC.PARSE_ERROR, 'Parse error: the body is not JSON');
  }
  const messages: unknown[] | null = Array.isArray(body) ? body : null;
  const batch = messages !== null;
  // One POST may not fan out into more calls (and held confirmations) than this.
  if (batch && messages.length > MAX_BATCH_MESSAGES)
    return badRequest(`A batch may hold at most ${MAX_BATCH_MESSAGES} messages`, { limit: MAX_BATCH_MESSAGES });
  const items: Incoming[] = batch ? messages.map(classify) : [classify(body)];
  if (batch && items.length === 0) return badRequest('An empty batch is invalid');
  const [single] = items;
  if (!batch && single?.kind === 'invalid')
    return { body: rpcError(single.id, single.code, single.message), status: 400 };
  const first = items.find((i): i is Call => i.kind === 'request' || i.kind === 'notification');
  return { batch, items, first };
}

/**
 * The revision (README: "How the gateway picks the revision of a request"): a 2026-07-28
 * request says so in its `_meta` (or header) and is held to that wire's rules (`modernRevision`);
 * a header naming a version we do not speak is refused with the request id; one naming a session
 * speaks the session's (see `sessionRevision`); one with neither is served statelessly at the
 * header's legacy revision, else the newest. `initialize` opens a session, alone (never batched).
 */
export function negotiateRevision(
  parsed: ParsedPost,
  headerVersion: string | null,
  sessionHeader: string | null,
  header: HeaderOf = NO_HEADER,
): Negotiated {
  const { batch, first } = parsed;
  const metaVersion = first ? metaOf(first.message.params)[META_PROTOCOL_VERSION] : undefined;
  const namedMeta = typeof metaVersion === 'string' && metaVersion !== '';
  if (headerVersion !== null && namedMeta && headerVersion !== metaVersion)
    return {
      kind: 'reply',
      reply: mismatch(first, 'Header mismatch: MCP-Protocol-Version does not match the request _meta'),
    };
  if (headerVersion !== null && !isSupportedVersion(headerVersion))
    return { kind: 'reply', reply: unsupportedVersion(first, headerVersion) };
  const modernHeader = headerVersion !== null && isModernVersion(headerVersion) ? headerVersion : null;
  const modernVersion = namedMeta ? metaVersion : modernHeader;
  if (modernVersion !== null) return modernRevision(parsed, modernVersion, headerVersion, header);
  if (first?.kind === 'request' && first.message.method === 'initialize') {
    return batch
      ? { kind: 'reply', reply: badRequest('initialize cannot be part of a batch') }
      : { kind: 'initialize', request: first.message };
  }
  if (sessionHeader !== null) return { kind: 'session', id: sessionHeader };
  const protocolVersion = headerVersion ?? LATEST_LEGACY_VERSION;
  if (batch && protocolVersion !== BATCH_PROTOCOL_VERSION) {
    const message = `Batches are not supported by protocol version ${protocolVersion} (a sessionless batch needs MCP-Protocol-Version: ${BATCH_PROTOCOL_VERSION})`;
    return { kind: 'reply', reply: badRequest(message) };
  }
  return { kind: 'stateless', protocolVersion };
}

/**
 * A 2026-07-28 request, held to that wire (README: "2026-07-28 strictness"): a modern version
 * the gateway speaks, unbatched, `MCP-Protocol-Version` sent; a request's `_meta` carries
 * `protocolVersion` and `clientCapabilities` (else -32602); `Mcp-Method`/`Mcp-Name` agree with
 * the body (else -32020); a method the revision removed is 404 -32601. All 400s keep the id.
 */
function modernRevision(
  { batch, first }: ParsedPost,
  requested: string,
  headerVersion: string | null,
  header: HeaderOf,
): Negotiated {
  if (!isSupportedVersion(requested) || !isModernVersion(requested))
    return { kind: 'reply', reply: unsupportedVersion(first, requested) };
  if (batch) return { kind: 'reply', reply: badRequest(`Batches are not supported by protocol version ${requested}`) };
  if (headerVersion === null)
    return { kind: 'reply', reply: mismatch(first, 'Header mismatch: the MCP-Protocol-Version header is required') };
  if (first?.kind !== 'request') return { kind: 'stateless', protocolVersion: requested };
  const { id, method, params } = first.message;
  const meta = metaOf(params);
  const capabilities = meta[META_CLIENT_CAPABILITIES];
  if (
    typeof meta[META_PROTOCOL_VERSION] !== 'string' ||
    typeof capabilities !== 'object' ||
    capabilities === null ||
    Array.isArray(capabilities)
  ) {
    const message = `Invalid params: _meta must carry ${META_PROTOCOL_VERSION} and ${META_CLIENT_CAPABILITIES}`;
    return { kind: 'reply', reply: { body: rpcError(id, JSON_RPC.INVALID_PARAMS, message), status: 400 } };
  }
  const mismatched = headerMismatch(method, params, header);
  if (mismatched !== null) return { kind: 'reply', reply: mismatch(first, mismatched) };
  if (REMOVED_MODERN_METHODS.has(method))
    return {
      kind: 'reply',
      reply: {
        body: rpcError(id, JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${method} is not part of ${requested}`),
        status: 404,
      },
    };
  return { kind: 'stateless', protocolVersion: requested };
}

const NO_HEADER: HeaderOf = () => null;

const idOf = (first: Call | undefined) => (first?.kind === 'request' ? first.message.id : null);

/** 400 -32020: a mirrored header disagrees with the body (or a required one is missing). */
const mismatch = (first: Call | undefined, message: string): Reply => ({
  body: rpcError(idOf(first), JSON_RPC.HEADER_MISMATCH, message),
  status: 400,
});

/** 400 -32022 with the versions we speak and the one asked for (UnsupportedProtocolVersionError). */
function unsupportedVersion(first: Call | undefined, requested: string): Reply {
  const shown = requested.slice(0, 40);
  const data = { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested: shown };
  return {
    body: rpcError(idOf(first), JSON_RPC.UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${shown}`, data),
    status: 400,
  };
}

/** The revision of a request in a session: the session's (a header may repeat it, or name the assumed default). */
export function sessionRevision(batch: boolean, sessionVersion: string, headerVersion: string | null): Reply | null {
  if (headerVersion !== null && headerVersion !== sessionVersion && headerVersion !== DEFAULT_ASSUMED_VERSION) {
    return badRequest('MCP-Protocol-Version does not match the session');
  }
  if (batch && sessionVersion !== BATCH_PROTOCOL_VERSION)
    return badRequest(`Batches are not supported by protocol version ${sessionVersion}`);
  return null;
}
