import type { EventBus, Logger } from '@agentgw/core';
import { isModernVersion } from '@agentgw/mcp-client';
import { BusWakeups } from '../bus-wakeups.js';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import { ClientGone, GATEWAY_RPC, invalidParams, RpcError } from '../rpc-errors.js';
import { BridgeableCall, type CallDeps } from './bridgeable-call.js';
import { endOf, responsesOf, roundOf } from './bridge-rounds.js';
import { BRIDGE_STATE_PREFIX } from './bridge-state.js';
import type { BridgeStore } from './bridge-store.js';
import { CAPABILITY_OF, clientOwner, RELAY_LIMITS, type RelayLimits } from './relay-contract.js';
import type { ServerRequestRelay } from './server-request-relay.js';

interface BridgeDeps {
  store: BridgeStore;
  /** Delivers the client's answers upstream exactly as answers to relayed requests are. */
  relay: Pick<ServerRequestRelay, 'deliver'>;
  bus: Pick<EventBus, 'publish' | 'subscribe'>;
  logger: Logger;
}

/**
 * A legacy (session) upstream's server-to-client requests for a 2026-07-28 client, which takes
 * none on a stream (the reverse of mrtr-bridge.ts): the relay sends them to a bridge channel,
 * the first becomes the client's answer, an input_required round (`inputRequests` keyed by the
 * relay's ids, a `requestState` of our own), while the upstream call keeps running on this
 * replica and writes what follows (another question, its final answer) to the bridge store.
 * The client's retry, on any replica, delivers its `inputResponses` upstream as answers to the
 * relayed requests and waits for that next event. The call is decided and audited once.
 */
export class LegacyRequestBridge {
  private readonly continued: BusWakeups<'mcp_relay.continued'>;
  private readonly calls: BridgeDeps & CallDeps;

  constructor(deps: BridgeDeps, limits: RelayLimits = RELAY_LIMITS) {
    this.continued = new BusWakeups(deps.bus, 'mcp_relay.continued', ({ id }) => id);
    this.calls = { ...deps, limits, running: new Set() };
  }

  /** The bridge of one forwarded request: null unless a 2026-07-28 client (no stream) declared something an upstream may ask for. */
  forRequest(ctx: McpRequestContext, method: string): BridgeableCall | null {
    if (ctx.channel !== null || !isModernVersion(ctx.protocolVersion)) return null;
    if (!Object.values(CAPABILITY_OF).some((capability) => capability in ctx.clientCapabilities)) return null;
    return new BridgeableCall(this.calls, clientOwner(null, ctx.principal), method, ctx.signal);
  }

  /**
   * The client's retry of a bridged call (its params carry our requestState): only its owner,
   * with the same method, continues it; its `inputResponses` go upstream; then the next round,
   * or the call's final answer. Unknown, expired or foreign → -32602.
   */
  async resume(method: string, params: McpResult, ctx: McpRequestContext): Promise<McpResult> {
    const id = String(params.requestState).slice(BRIDGE_STATE_PREFIX.length);
    const owner = clientOwner(ctx.session?.claims.sid ?? null, ctx.principal);
    const call = await this.calls.store.callOf(owner, id);
    if (call?.method !== method)
      throw invalidParams(
        'requestState names no call of this client waiting for input (unknown, finished, expired or another client’s)',
      );
    const responses = responsesOf(params.inputResponses);
    if (responses.length > 0) {
      const caller = { principal: ctx.principal, requestId: ctx.requestId, headers: ctx.headers };
      const unknown = await this.calls.relay.deliver(owner, caller, responses);
      if (unknown > 0)
        throw invalidParams(
          `${unknown} of the inputResponses answer no input request pending for this client (unknown, answered or expired)`,
        );
    }
    return this.next(owner, id, ctx.signal);
  }

  /** Shutdown: the calls still running here are cancelled upstream, and waiting retries fall back to their timers. */
  async stop(): Promise<void> {
    for (const controller of this.calls.running) controller.abort();
    await this.continued.stop();
  }

  /** Waits (at most the relay timeout) for the call's next events: its end wins over questions asked before it. */
  private async next(owner: string, id: string, signal: AbortSignal): Promise<McpResult> {
    const { store, limits } = this.calls;
    const deadline = Date.now() + limits.timeoutMs;
    // Watched before the first read, so an event in between is not missed.
    const watch = await this.continued.watch(id);
    try {
      for (;;) {
        const events = await store.drain(id);
        const end = events.find((event) => event.kind !== 'asked');
        if (end) {
          await store.close(owner, id);
          return endOf(end);
        }
        if (events.length > 0) return roundOf(id, events);
        const left = deadline - Date.now();
        if (left <= 0 || signal.aborted) break;
        await watch.next(Math.min(left, limits.answerFallbackMs), signal);
      }
    } finally {
      watch.close();
    }
    if (signal.aborted) throw new ClientGone();
    throw new RpcError(
      GATEWAY_RPC.UPSTREAM_TIMEOUT,
      'The provider did not go on in time; the same requestState may be sent again to wait on',
      504,
    );
  }
}
