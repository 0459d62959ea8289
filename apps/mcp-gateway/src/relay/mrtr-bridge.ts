import { JSON_RPC } from '@agentgw/mcp-client';
import { ClientGone, GATEWAY_RPC, RpcError } from '../rpc-errors.js';
import type { AskOutcome, ClientChannel, RelayOrigin } from './relay-contract.js';
import type { ServerRequestRelay } from './server-request-relay.js';

type Result = Record<string, unknown>;

/** Rounds of questions one call may take before the gateway gives up on an upstream that keeps asking. */
export const MAX_BRIDGED_ROUNDS = 4;

/** The client capability each input request of an input_required result needs. */
const CAPABILITY_OF: Readonly<Record<string, string>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** The call a bridged result belongs to: the legacy client's stream, and the signal that ends it. */
export interface BridgeOrigin {
  origin: RelayOrigin & { channel: ClientChannel };
  signal: AbortSignal;
}

/** Sends the same request upstream again with `inputResponses` and `requestState` added; its result. */
export type Retry = (answers: { inputResponses: Result; requestState?: string }) => Promise<Result>;

const isObject = (value: unknown): value is Result =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A 2026-07-28 upstream's input_required (MRTR) result answered for a legacy client, which cannot
 * read one: each input request is asked of the client as a server-to-client request on the
 * call's stream, the answers are keyed as the upstream keyed its requests, and the request is
 * sent upstream again with them and `requestState` copied verbatim; until a final result, at most
 * MAX_BRIDGED_ROUNDS rounds. A request the client did not declare the capability for: -32021.
 */
export async function bridgeInputRequired(
  relay: Pick<ServerRequestRelay, 'ask'>,
  from: BridgeOrigin,
  first: Result,
  retry: Retry,
): Promise<Result> {
  let result = first;
  for (let round = 0; round < MAX_BRIDGED_ROUNDS && result.resultType === 'input_required'; round++) {
    const requests = isObject(result.inputRequests) ? Object.entries(result.inputRequests) : [];
    assertAnswerable(requests, from.origin.capabilities);
    const answered = await Promise.all(
      requests.map(
        async ([key, request]) => [key, resultOf(await relay.ask(from.origin, asked(request), from.signal))] as const,
      ),
    );
    const state = result.requestState;
    result = await retry({
      inputResponses: Object.fromEntries(answered),
      ...(typeof state === 'string' ? { requestState: state } : {}),
    });
  }
  if (result.resultType === 'input_required') {
    throw new RpcError(
      GATEWAY_RPC.UPSTREAM_FAILED,
      `The provider still asked for input after ${MAX_BRIDGED_ROUNDS} rounds`,
      502,
    );
  }
  return result;
}

/** Every input request is one the client can take (a relayable method whose capability it declared), else -32021 naming what is missing. */
function assertAnswerable(
  requests: readonly (readonly [string, unknown])[],
  capabilities: Readonly<Record<string, unknown>>,
): void {
  const missing = new Set<string>();
  for (const [, request] of requests) {
    const method = isObject(request) && typeof request.method === 'string' ? request.method : '';
    const capability = CAPABILITY_OF[method] ?? (method.slice(0, 100) || 'unknown');
    if (!(capability in capabilities)) missing.add(capability);
  }
  if (missing.size > 0) {
    throw new RpcError(
      JSON_RPC.MISSING_REQUIRED_CLIENT_CAPABILITY,
      `The request needs client capabilities it did not declare: ${[...missing].join(', ')}`,
      400,
      { missing: [...missing] },
    );
  }
}

/** The server-to-client request an input request stands for (its method and params, nothing else). */
const asked = (request: unknown): { method: string; params?: Result } => {
  const { method, params } = request as { method: string; params?: unknown };
  return isObject(params) ? { method, params } : { method };
};

/** The client's result for one input request; anything else ends the call with a clear error. */
function resultOf(outcome: AskOutcome): Result {
  switch (outcome.kind) {
    case 'answered':
      if ('result' in outcome.response) return outcome.response.result;
      throw new RpcError(outcome.response.error.code, outcome.response.error.message.slice(0, 500), 200);
    case 'refused':
      throw new RpcError(JSON_RPC.INTERNAL_ERROR, outcome.message, 429);
    case 'timeout':
      throw new RpcError(
        GATEWAY_RPC.UPSTREAM_TIMEOUT,
        'The client did not answer the provider’s question in time',
        504,
      );
    case 'gone':
      throw new ClientGone();
  }
}
