import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { z } from 'zod';
import { AppError, ValidationError, type ErrorBody } from '../errors.js';
import { newRequestId } from '../ids.js';
import type { Logger } from '../logger.js';

/** Turns zod issues into `{ field, message }` pairs; `field` is a dotted path. */
export function zodIssues(error: z.ZodError): { field: string; message: string }[] {
  return error.issues.map((i) => ({ field: i.path.map(String).join('.') || '(body)', message: i.message }));
}

export function validationErrorFrom(error: z.ZodError): ValidationError {
  const issues = zodIssues(error);
  const first = issues[0];
  return new ValidationError(first ? `${first.field}: ${first.message}` : 'Invalid input', {
    field: first?.field,
    issues,
  });
}

/** Hono's onError: every failure becomes the one error body; unknown errors are 500 + request id only. */
export function errorHandler(logger?: Logger): ErrorHandler {
  return (err, c) => {
    const body = toErrorBody(err, c, logger);
    const status = body.status;
    if (err instanceof AppError && err.code === 'RATE_LIMITED' && typeof body.body.retryAfter === 'number') {
      c.header('Retry-After', String(body.body.retryAfter));
    }
    return c.json(body.body, status as 400);
  };
}

function toErrorBody(err: Error, c: Context, logger?: Logger): { status: number; body: ErrorBody } {
  if (err instanceof AppError) return { status: err.status, body: err.toBody() };
  if (err instanceof z.ZodError) {
    const v = validationErrorFrom(err);
    return { status: 400, body: v.toBody() };
  }
  // SQLSTATE class 22 (data exception) is the database refusing a value the client sent: a
  // NUL character in text or jsonb, a number out of range. Both pg and PGlite set `code`.
  if (isDataException(err)) {
    return {
      status: 400,
      body: new ValidationError(
        'A value in the request cannot be stored (for example a NUL character or a number out of range)',
      ).toBody(),
    };
  }
  // Hono's c.req.json() throws a bare SyntaxError on a malformed body.
  if (err instanceof SyntaxError && /JSON/i.test(err.message)) {
    return { status: 400, body: new ValidationError('Malformed JSON body', { field: '(body)' }).toBody() };
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    if (status === 413) return { status, body: { code: 'PAYLOAD_TOO_LARGE', message: 'Request body too large' } };
    if (status === 400 && /malformed json/i.test(err.message)) {
      return { status, body: new ValidationError('Malformed JSON body', { field: '(body)' }).toBody() };
    }
    if (status === 400) return { status, body: { code: 'BAD_REQUEST', message: err.message || 'Bad request' } };
    if (status === 401)
      return { status, body: { code: 'UNAUTHORIZED', message: err.message || 'Authentication required' } };
    if (status < 500) return { status, body: { code: 'HTTP_ERROR', message: err.message || 'Request failed' } };
  }
  const requestId = (c.get('requestId' as never) as string | undefined) ?? newRequestId();
  logger?.error({ err, requestId, path: c.req.path }, 'unhandled error');
  return { status: 500, body: { code: 'INTERNAL_ERROR', message: 'Internal server error', requestId } };
}

function isDataException(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}

export const notFoundHandler: NotFoundHandler = (c) =>
  c.json({ code: 'NOT_FOUND', message: `No route for ${c.req.method} ${c.req.path}` }, 404);
