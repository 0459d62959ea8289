import { createHash } from 'node:crypto';
import type { HeldCall } from '@agentgw/core';

/** Object keys sorted at every depth, so `{a,b}` and `{b,a}` hash the same; arrays keep their order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/**
 * What an exact-call approval is bound to: the agent, the end user, the provider, the tool and
 * the arguments. Any difference in one of them gives another hash, so the token refuses it.
 */
export function callHash(
  call: Pick<HeldCall, 'agentId' | 'endUserId' | 'providerId' | 'toolName' | 'arguments'>,
): string {
  const subject = [call.agentId, call.endUserId, call.providerId, call.toolName, canonical(call.arguments)];
  return createHash('sha256').update(JSON.stringify(subject)).digest('hex');
}
