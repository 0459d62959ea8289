import {
  BATCH_PROTOCOL_VERSION,
  DEFAULT_ASSUMED_VERSION,
  isModernVersion,
  isSupportedVersion,
  JSON_RPC,
  LATEST_LEGACY_VERSION,
  META_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JsonRpcRequest,
} from '@agentgw/mcp-client';
import { classify, metaOf, type Incoming } from '../json-rpc-messages.js';
import { refusal, rpcError, type Reply } from './replies.js';

/** Messages one JSON-RPC batch (2025-03-26) may hold; a longer one is refused whole (400, -32600). */
export const MAX_BATCH_MESSAGES = 20;

/** A message that is not a valid JSON-RPC request (answered with its own error). */
export type Invalid = Extract<Incoming, { kind: 'invalid' }>;
/** A JSON-RPC request of the body (answered by the pipeline). */
export type RequestItem = Extract<Incoming, { kind: 'request' }>;
type Call = Extract<Incoming, { kind: 'request' | 'notification' }>;

/** A POST body read as JSON-RPC: its messages and the first request or notification (what the revision and the log go by). */
export interface ParsedPost {
  batch: boolean;
  items: Incoming[];
  first: Call | undefined;
}

/** How a parsed POST goes on: answered already, `initialize`, a stateless revision, or the session its header names. */
export type Negotiated = { kind: 'reply'; reply: Reply } | { kind: 'initialize'; request: JsonRpcRequest } | { kind: 'stateless'; protocolVersion: string } | { kind: 'session'; id: string };

const badRequest = (message: string, data?: Record<string, unknown>) => refusal(400, JSON_RPC.INVALID_REQUEST, message, data);

/**
 * The body as JSON-RPC messages, or the 400 for a body that is not JSON, an unsupported
 * `MCP-Protocol-Version`, an over-long or empty batch, or a single invalid message.
 */
export function parsePost(text: string, headerVersion: string | null): ParsedPost | Reply {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refusal(400, JSON_RPC.PARSE_ERROR, 'Parse error: the body is not JSON');
  }
  if (headerVersion !== null && !isSupportedVersion(headerVersion)) {
    return badRequest(`Bad Request: unsupported MCP-Protocol-Version ${headerVersion.slice(0, 40)}`, { supported: [...SUPPORTED_PROTOCOL_VERSIONS] });
  }
  const messages: unknown[] | null = Array.isArray(body) ? body : null;
  const batch = messages !== null;
  // One POST may not fan out into more calls (and held confirmations) than this.
  if (batch && messages.length > MAX_BATCH_MESSAGES) return badRequest(`A batch may hold at most ${MAX_BATCH_MESSAGES} messages`, { limit: MAX_BATCH_MESSAGES });
  const items: Incoming[] = batch ? messages.map(classify) : [classify(body)];
  if (batch && items.length === 0) return badRequest('An empty batch is invalid');
  const single = items[0]!;
  if (!batch && single.kind === 'invalid') return { body: rpcError(single.id, single.code, single.message), status: 400 };
  const first = items.find((i): i is Call => i.kind === 'request' || i.kind === 'notification');
  return { batch, items, first };
}

/**
 * The revision (README: "How the gateway picks the revision of a request"): a 2026-07-28
 * request says so in its `_meta` (or header); one naming a session speaks the session's (see
 * `sessionRevision`); one with neither is served statelessly at the header's legacy revision,
 * else the newest. `initialize` opens a session, alone (never batched).
 */
export function negotiateRevision(parsed: ParsedPost, headerVersion: string | null, sessionHeader: string | null): Negotiated {
  const { batch, first } = parsed;
  if (first?.kind === 'request' && first.message.method === 'initialize') {
    return batch ? { kind: 'reply', reply: badRequest('initialize cannot be part of a batch') } : { kind: 'initialize', request: first.message };
  }
  const metaVersion = first ? metaOf(first.message.params)[META_PROTOCOL_VERSION] : undefined;
  if ((typeof metaVersion === 'string' && metaVersion !== '') || (headerVersion !== null && isModernVersion(headerVersion))) {
    return modernRevision(parsed, typeof metaVersion === 'string' ? metaVersion : headerVersion!, headerVersion);
  }
  if (sessionHeader !== null) return { kind: 'session', id: sessionHeader };
  const protocolVersion = headerVersion ?? LATEST_LEGACY_VERSION;
  if (batch && protocolVersion !== BATCH_PROTOCOL_VERSION) {
    const message = `Batches are not supported by protocol version ${protocolVersion} (a sessionless batch needs MCP-Protocol-Version: ${BATCH_PROTOCOL_VERSION})`;
    return { kind: 'reply', reply: badRequest(message) };
  }
  return { kind: 'stateless', protocolVersion };
}

/** A 2026-07-28 request: the revision it asks for must be modern, agree with the header, and come unbatched. */
function modernRevision({ batch, first }: ParsedPost, requested: string, headerVersion: string | null): Negotiated {
  if (!isSupportedVersion(requested) || !isModernVersion(requested)) {
    const id = first?.kind === 'request' ? first.message.id : null;
    const data = { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested };
    const body = rpcError(id, JSON_RPC.UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${String(requested).slice(0, 40)}`, data);
    return { kind: 'reply', reply: { body, status: 400 } };
  }
  if (headerVersion !== null && headerVersion !== requested) return { kind: 'reply', reply: badRequest('MCP-Protocol-Version does not match the request _meta') };
  if (batch) return { kind: 'reply', reply: badRequest(`Batches are not supported by protocol version ${requested}`) };
  return { kind: 'stateless', protocolVersion: requested };
}

/** The revision of a request in a session: the session's (a header may repeat it, or name the assumed default). */
export function sessionRevision(batch: boolean, sessionVersion: string, headerVersion: string | null): Reply | null {
  if (headerVersion !== null && headerVersion !== sessionVersion && headerVersion !== DEFAULT_ASSUMED_VERSION) {
    return badRequest('MCP-Protocol-Version does not match the session');
  }
  if (batch && sessionVersion !== BATCH_PROTOCOL_VERSION) return badRequest(`Batches are not supported by protocol version ${sessionVersion}`);
  return null;
}
