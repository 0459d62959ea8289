import { isAppError, type EgressRefusedError, type Logger } from '@agentgw/core';
import { JSON_RPC, type JsonRpcErrorObject } from '@agentgw/mcp-client';

/** JSON-RPC error codes of the gateway's own (server-defined range), with the HTTP status each answers with. */
export const GATEWAY_RPC = {
  /** Unknown or ended `Mcp-Session-Id` (HTTP 404: the client starts a new session). */
  SESSION_NOT_FOUND: -32001,
  /** Denied by policy, provider access or the kill switch (HTTP 403). */
  DENIED: -32003,
  /** A held call was rejected or timed out (HTTP 403). */
  CONFIRMATION_REJECTED: -32004,
  /** The upstream could not be reached or did not speak MCP (HTTP 502). */
  UPSTREAM_FAILED: -32010,
  /** The upstream did not answer in time (HTTP 504). */
  UPSTREAM_TIMEOUT: -32011,
  /** The resource named is not offered by any reachable provider (MCP's resource-not-found). */
  RESOURCE_NOT_FOUND: -32002,
  /** The agent's or tenant's call quota is spent (HTTP 429 with Retry-After; `data.retryAfter` in seconds). */
  RATE_LIMITED: -32029,
} as const;

/** A JSON-RPC error with the HTTP status its single-message JSON answer carries. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly status = 200,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }

  toObject(): JsonRpcErrorObject {
    return { code: this.code, message: this.message, ...(this.data ? { data: this.data } : {}) };
  }
}

/** The caller went away: there is nobody to answer. */
export class ClientGone extends Error {}

/** -32602: the request's params do not fit the method. */
export const invalidParams = (message: string) => new RpcError(JSON_RPC.INVALID_PARAMS, message);

/**
 * Any thrown value as a JSON-RPC error: our RpcErrors as they are, the services' AppErrors with
 * their status and code (`data.code`), anything else an internal error without detail (logged).
 */
export function toRpcError(err: unknown, logger: Logger): RpcError {
  if (err instanceof RpcError) return err;
  if (isAppError(err)) {
    const code =
      err.status === 403 ? GATEWAY_RPC.DENIED : err.status === 429 ? GATEWAY_RPC.RATE_LIMITED : JSON_RPC.SERVER_ERROR;
    return new RpcError(code, err.message, err.status, { code: err.code, ...err.details });
  }
  logger.error({ reason: err instanceof Error ? err.message : String(err) }, 'MCP request failed');
  return new RpcError(JSON_RPC.INTERNAL_ERROR, 'Internal error', 500);
}

/** The egress policy refused the provider's address: a refusal (403, never contacted), not an upstream failure. */
export const egressRefused = (refused: EgressRefusedError, providerId: string): RpcError =>
  new RpcError(GATEWAY_RPC.DENIED, refused.message, 403, { providerId, code: refused.code, ...refused.details });
