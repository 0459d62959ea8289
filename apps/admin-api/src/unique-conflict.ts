import type { ConflictError } from '@agentgw/core';
import { isUniqueViolation } from '@agentgw/db';

/** Runs a write; a unique-constraint violation (a race past any pre-check) becomes the given 409. */
export async function conflictOnUnique<T>(write: () => Promise<T>, conflict: () => ConflictError): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw isUniqueViolation(err) ? conflict() : err;
  }
}
