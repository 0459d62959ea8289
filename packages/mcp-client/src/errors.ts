/**
 * Why an upstream call failed, in terms a caller maps to HTTP: `unreachable` / `http` /
 * `protocol` / `too_large` → 502, `timeout` → 504, `aborted` → the caller went away.
 * Messages never carry the upstream's body (it could echo a secret back).
 */
export type McpUpstreamFailure = 'unreachable' | 'timeout' | 'aborted' | 'http' | 'protocol' | 'too_large';

export class McpUpstreamError extends Error {
  constructor(
    readonly kind: McpUpstreamFailure,
    message: string,
    /** The upstream's HTTP status, for `http` failures. */
    readonly status?: number,
    /** The connection error code (ECONNREFUSED, ENOTFOUND, …), for `unreachable` failures. */
    readonly connectCode?: string,
    /** The underlying error (e.g. the egress policy's refusal), for callers that tell causes apart. */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'McpUpstreamError';
  }
}

/** Type guard for callers mapping upstream failures to HTTP. */
export const isMcpUpstreamError = (err: unknown): err is McpUpstreamError => err instanceof McpUpstreamError;
