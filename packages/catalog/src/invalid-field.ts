import { ValidationError } from '@agentgw/core';

/** A 400 for a field that is well-formed but refers to something unusable, shaped like schema failures. */
export function invalidField(field: string, message: string): ValidationError {
  return new ValidationError(`${field}: ${message}`, { field, issues: [{ field, message }] });
}
