import type { Principal } from '@agentgw/auth';
import type { CallerSignal, JsonRpcNotification, JsonRpcResponse, UpstreamSession } from '@agentgw/mcp-client';
import type { ClientChannel } from './relay/relay-contract.js';
import type { SessionClaims } from './session-ids.js';
import type { Reauthenticate } from './tool-call/released-call-check.js';

/*
 * The request-context types every MCP feature is handed: a leaf that imports only types, so a
 * feature imports these instead of the method router (which imports the features).
 */

/** Which endpoint a message arrived on; the unified one with its `?providers=` filter and its `?tools=` surface as given (checked by tool-search/tool-surface.ts); the proxy's path segment, an id or a name (addressed-provider.ts). */
export type McpEndpoint =
  | { kind: 'unified'; providerFilter: readonly string[] | null; toolsParam: string | null }
  | { kind: 'proxy'; providerId: string };

/** Everything one JSON-RPC request is handled with. */
export interface McpRequestContext {
  principal: Principal;
  requestId: string;
  endpoint: McpEndpoint;
  /** The revision the client speaks on this request. */
  protocolVersion: string;
  /** The legacy session it belongs to (with the upstream sessions opened so far), if any. */
  session: { claims: SessionClaims; upstreams: Record<string, UpstreamSession> } | null;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /**
   * The same going away without an AbortSignal made (the client connection's `'abort'` event), for
   * the upstream call's deadline; set by the HTTP transport, else `signal` serves.
   */
  callerGone?: CallerSignal;
  /** Sends a notification on the response stream; null when the answer is a plain JSON body. */
  notify: ((notification: JsonRpcNotification) => void) | null;
  /** An exact-call approval token the client presented (X-Confirmation-Token or `_meta`). */
  confirmationToken: string | null;
  /** The request's `_meta.progressToken`, for progress notifications while a call is held. */
  progressToken: string | number | null;
  /** Authenticates the request's credentials again: a held call is re-checked once released. */
  reauthenticate: Reauthenticate;
  /** The relayable capabilities the client declared (a session's in initialize, else the 2026-07-28 `_meta`): passed on upstream, lists kept per set. */
  clientCapabilities: Readonly<Record<string, unknown>>;
  /** Where a server request (sampling, elicitation, roots) an upstream sends while answering goes: the SSE answer; null when it cannot take one. */
  channel: ClientChannel | null;
  /** The request's HTTP headers (read for the 2026-07-28 `Mcp-Param-*` check, methods/param-headers.ts). */
  headers: Pick<Headers, 'get'>;
  /** Told when an upstream pauses its answer stream (SEP-1699): the SSE answer pauses the client's too (stream-resumption/). */
  onUpstreamPaused?: (retryMs: number) => void;
}

/** A JSON-RPC result as the gateway passes it on (an upstream's, or its own). */
export type McpResult = Record<string, unknown>;

/** One request's answer: the JSON-RPC response and the HTTP status it goes out with. */
export interface McpAnswer {
  response: JsonRpcResponse;
  status: number;
}
