import { JSON_RPC } from '@agentgw/mcp-client';
import { RpcError } from '../rpc-errors.js';

type Result = Record<string, unknown>;

/** The client capability each server-to-client request of an input_required result needs (SEP-2322). */
const NEEDED_CAPABILITY: Readonly<Record<string, string>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/**
 * An upstream's input_required (MRTR) result as the client may see it: only the input requests
 * for capabilities the client declared (an upstream that asks for more is held to the rule for
 * it), `requestState` and everything else untouched. Nothing left to ask → 400 -32021: the
 * request needs a capability the client does not have. The result as it is when all are declared.
 */
export function honourClientCapabilities(result: Result, capabilities: Readonly<Record<string, unknown>>): Result {
  const requests = result.inputRequests;
  if (typeof requests !== 'object' || requests === null || Array.isArray(requests)) return result;
  const entries = Object.entries(requests as Result);
  const kept = entries.filter(([, request]) => declares(request, capabilities));
  if (kept.length === entries.length) return result;
  if (kept.length === 0) {
    const missing = [
      ...new Set(entries.map(([, request]) => NEEDED_CAPABILITY[methodOf(request)] ?? methodOf(request))),
    ];
    throw new RpcError(
      JSON_RPC.MISSING_REQUIRED_CLIENT_CAPABILITY,
      `The request needs client capabilities it did not declare: ${missing.join(', ')}`,
      400,
      { missing },
    );
  }
  return { ...result, inputRequests: Object.fromEntries(kept) };
}

const methodOf = (request: unknown): string =>
  typeof request === 'object' && request !== null && typeof (request as Result).method === 'string'
    ? ((request as Result).method as string)
    : '';

/** A request the client can answer: one whose capability it declared (a method we do not know needs nothing we could check). */
const declares = (request: unknown, capabilities: Readonly<Record<string, unknown>>): boolean => {
  const needed = NEEDED_CAPABILITY[methodOf(request)];
  return needed === undefined || capabilities[needed] !== undefined;
};
