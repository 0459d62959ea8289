import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse, UpstreamTarget } from '@agentgw/mcp-client';
import type { TargetRequest } from '../upstream-auth/request-targets.js';
import type { RelayedRequest } from './relay-store.js';

// What the relay's users see of it (channels, origins, outcomes, limits) and the rules it answers by.

/** A relayed request whose answer goes to an upstream (not a bridged one the gateway asked itself). */
export type UpstreamRelayed = Extract<RelayedRequest, { destination: 'upstream' }>;

/** The client end of one exchange a relayed request can be written to (the call's SSE answer). */
export interface ClientChannel {
  /** Whose answers may come back (see `clientOwner`). */
  owner: string;
  /** Writes the request on the client's stream (an answer not yet streaming switches to SSE). */
  send(request: JsonRpcRequest): void;
}

/** The call a server request arrived during: where to send it, and what it is attributed to. */
export interface RelayOrigin {
  provider: ProviderRecord;
  target: UpstreamTarget;
  principal: Principal;
  /** Where the request goes: the call's stream, or a 2026-07-28 client's bridge (relay/legacy-request-bridge.ts); null when the client asked for a plain JSON answer. */
  channel: ClientChannel | null;
  /** The relayable capabilities the client declared. */
  capabilities: Readonly<Record<string, unknown>>;
  /** The tools/call it happened in (its audit id and tool), when it did. */
  call: { auditId: string; toolName: string } | null;
}

/** How many relayed requests one client may have unanswered, how long one waits for its answer, and how often a bridged call re-reads the store without being told (a missed bus message). */
export interface RelayLimits {
  maxPendingPerClient: number;
  timeoutMs: number;
  answerFallbackMs: number;
}

/** Defaults: 16 pending per client, 5 minutes (a human may be answering an elicitation), a re-read every 2 s. */
export const RELAY_LIMITS: Readonly<RelayLimits> = Object.freeze({
  maxPendingPerClient: 16,
  timeoutMs: 5 * 60_000,
  answerFallbackMs: 2_000,
});

/** Every id the gateway mints for a relayed request starts so (anything else is not one of ours). */
export const RELAY_ID_PREFIX = 'agentgw-relay-';

/** MCP's request-timeout error code (the SDKs' RequestTimeout). */
export const REQUEST_TIMEOUT = -32001;
/** The store keeps an entry this much past the timeout, so the replica that armed the timer still finds it to answer the upstream. */
export const EXPIRY_GRACE_MS = 30_000;

/** What asking the client came to: its answer, a refusal (too many pending), no answer in time, or the client went away. */
export type AskOutcome =
  | { kind: 'answered'; response: JsonRpcResponse }
  | { kind: 'refused'; message: string }
  | { kind: 'timeout' }
  | { kind: 'gone' };

/** The client capability each relayable server request needs. */
export const CAPABILITY_OF: Readonly<Record<string, string>> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};
/** Server requests that act for the user (a model call, a question to them): audited and attributed to their call. */
export const AUDITED: ReadonlySet<string> = new Set(['sampling/createMessage', 'elicitation/create']);

/** Who POSTed a client's answers, and their request's headers (a `token_exchange` provider exchanges its bearer). */
export type RelayCaller = Pick<TargetRequest, 'principal' | 'requestId' | 'headers'>;

/** Who a client is for routing its answers: its session, else (sessionless) its identity. */
export const clientOwner = (sid: string | null, principal: Principal): string =>
  sid !== null ? `s:${sid}` : `p:${JSON.stringify([principal.userId, principal.agentId, principal.endUserId])}`;

/** A JSON-RPC error answer to a relayed request. */
export const refusal = (id: JsonRpcId, code: number, message: string): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});
