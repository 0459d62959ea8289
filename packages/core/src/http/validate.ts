import type { Context } from 'hono';
import type { z } from 'zod';
import { ValidationError } from '../errors.js';
import { validationErrorFrom } from './error-handler.js';
import { assertJsonDepth } from './json-depth.js';

/** Reads and validates a JSON body; malformed, too deeply nested JSON and schema failures are 400s. */
export async function parseJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await c.req.text();
  assertJsonDepth(text);
  let raw: unknown;
  try {
    raw = text.length === 0 ? {} : JSON.parse(text);
  } catch {
    throw new ValidationError('Malformed JSON body', { field: '(body)' });
  }
  const result = schema.safeParse(raw);
  if (!result.success) throw validationErrorFrom(result.error);
  return result.data;
}

/** Validates the query string (single values; repeated keys keep the last). */
export function parseQuery<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const result = schema.safeParse(c.req.query());
  if (!result.success) throw validationErrorFrom(result.error);
  return result.data;
}
