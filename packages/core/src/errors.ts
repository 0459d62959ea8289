/**
 * The one error body every service answers with: `{ code, message, ...details }`.
 * Throw these from domain code; the Hono error handler maps them to HTTP.
 */
export type ErrorBody = { code: string; message: string } & Record<string, unknown>;

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, ...this.details };
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details: { field?: string; issues?: { field: string; message: string }[] } = {}) {
    super(400, 'VALIDATION_ERROR', message, details);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Authentication required', code = 'UNAUTHORIZED') {
    super(401, code, message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'Not permitted', code = 'FORBIDDEN', details: Record<string, unknown> = {}) {
    super(403, code, message, details);
  }
}

export class NotFoundError extends AppError {
  constructor(what = 'Resource', code = 'NOT_FOUND') {
    super(404, code, `${what} not found`);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code = 'CONFLICT') {
    super(409, code, message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message = 'Request body too large') {
    super(413, 'PAYLOAD_TOO_LARGE', message);
  }
}

export class RateLimitedError extends AppError {
  constructor(
    message = 'Too many requests',
    readonly retryAfterSeconds?: number,
  ) {
    super(429, 'RATE_LIMITED', message, retryAfterSeconds ? { retryAfter: retryAfterSeconds } : {});
  }
}

export class NotImplementedError extends AppError {
  constructor(message = 'Not implemented') {
    super(501, 'NOT_IMPLEMENTED', message);
  }
}

/**
 * 403 EGRESS_REFUSED: the egress policy refused an outbound connection. `reason` names the rule
 * (metadata, link-local, private-address, …); the resolved address is never included.
 */
export class EgressRefusedError extends AppError {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(403, 'EGRESS_REFUSED', `Outbound connection refused by the egress policy: ${detail}`, { reason });
  }
}

export class UpstreamError extends AppError {
  constructor(message = 'Upstream request failed', details: Record<string, unknown> = {}) {
    super(502, 'UPSTREAM_ERROR', message, details);
  }
}

export class UpstreamTimeoutError extends AppError {
  constructor(message = 'Upstream did not answer in time') {
    super(504, 'UPSTREAM_TIMEOUT', message);
  }
}

export class DependencyUnavailableError extends AppError {
  constructor(message = 'A dependency is unavailable') {
    super(503, 'SERVICE_UNAVAILABLE', message);
  }
}

/** 401 CREDENTIALS_REQUIRED, the payload the spec fixes for invoke and credentials-check. */
export class CredentialsRequiredError extends AppError {
  constructor(missing: string[], authUrls: Record<string, string>) {
    super(401, 'CREDENTIALS_REQUIRED', `Missing credentials: ${missing.join(', ')}`, { missing, authUrls });
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
