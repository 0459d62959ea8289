import { newId, type EventBus, type Logger } from '@agentgw/core';
import {
  isModernVersion,
  JSON_RPC,
  type JsonRpcErrorObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '@agentgw/mcp-client';
import { BusWakeups } from '../bus-wakeups.js';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import { ClientGone, GATEWAY_RPC, invalidParams, RpcError } from '../rpc-errors.js';
import type { BridgeEvent, BridgeStore } from './bridge-store.js';
import { MAX_BRIDGED_ROUNDS } from './mrtr-bridge.js';
import {
  CAPABILITY_OF,
  clientOwner,
  EXPIRY_GRACE_MS,
  RELAY_LIMITS,
  type ClientChannel,
  type RelayLimits,
} from './relay-contract.js';
import type { ServerRequestRelay } from './server-request-relay.js';

/** Every requestState the gateway mints for a bridged call starts so (an upstream's own may not: it passes on verbatim). */
export const BRIDGE_STATE_PREFIX = 'agentgw-bridge-';

/** Whether a request's params (or a result) carry a requestState of the gateway's own. */
export const carriesBridgeState = (value: McpResult): boolean =>
  typeof value.requestState === 'string' && value.requestState.startsWith(BRIDGE_STATE_PREFIX);

/** How a bridged call's failure reaches the client's retry: the JSON-RPC error and its HTTP status. */
export interface BridgeFailure {
  error: JsonRpcErrorObject;
  status: number;
}

interface BridgeDeps {
  store: BridgeStore;
  /** Delivers the client's answers upstream exactly as answers to relayed requests are. */
  relay: Pick<ServerRequestRelay, 'deliver'>;
  bus: Pick<EventBus, 'publish' | 'subscribe'>;
  logger: Logger;
}

/** What one bridgeable call shares with the bridge: its deps, limits and the calls still running here. */
interface CallDeps extends BridgeDeps {
  limits: RelayLimits;
  running: Set<AbortController>;
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
  private readonly calls: CallDeps;

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

/**
 * One forwarded request of a 2026-07-28 client that its upstream may ask something during: the
 * channel the relay sends such a question to, and the signal the upstream call runs with (the
 * client's until the first round is answered; then the call belongs to the bridge).
 */
export class BridgeableCall {
  readonly channel: ClientChannel;
  private readonly controller = new AbortController();
  private readonly first: Promise<McpResult>;
  private settleFirst!: { resolve(result: McpResult): void; reject(err: unknown): void };
  private outcome: { result: Promise<McpResult>; failureOf(err: unknown): BridgeFailure } | null = null;
  private readonly detach: () => void;
  private id: string | null = null;
  private questions = 0;
  private exceeded = false;
  private ended = false;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: CallDeps,
    private readonly owner: string,
    private readonly method: string,
    clientSignal: AbortSignal,
  ) {
    this.channel = { owner, send: (request) => void this.queue(() => this.asked(request)) };
    this.first = new Promise((resolve, reject) => (this.settleFirst = { resolve, reject }));
    const abort = () => this.controller.abort();
    clientSignal.addEventListener('abort', abort, { once: true });
    if (clientSignal.aborted) abort();
    this.detach = () => clientSignal.removeEventListener('abort', abort);
  }

  /** What the upstream call runs with: aborted when the client leaves before a round is answered, or at shutdown. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * The upstream's answer with the bridge's own reasons for cancelling it said (too many
   * questions, the gateway stopping after a round), so the call's record and the client see them,
   * not a bare cancellation. Before any round, a cancellation is the client's leaving, as ever.
   */
  async explained(answered: Promise<McpResult>): Promise<McpResult> {
    try {
      return await answered;
    } catch (err) {
      if (this.exceeded)
        throw new RpcError(
          GATEWAY_RPC.UPSTREAM_FAILED,
          `The provider asked more than ${MAX_BRIDGED_ROUNDS} questions in one call`,
          502,
        );
      if (err instanceof ClientGone && this.id !== null)
        throw new RpcError(GATEWAY_RPC.UPSTREAM_FAILED, 'The gateway stopped before the provider answered', 502);
      throw err;
    }
  }

  /** `notify` while the client's request is still being answered; nothing once a round answered it (that exchange is over). */
  whileAnswering<N>(notify: ((notification: N) => void) | null): ((notification: N) => void) | null {
    return (
      notify &&
      ((notification) => {
        if (this.id === null) notify(notification);
      })
    );
  }

  /** The client's answer: the upstream's `result` when it comes first, else the first round (the rest goes to the store). */
  answer(result: Promise<McpResult>, failureOf: (err: unknown) => BridgeFailure): Promise<McpResult> {
    this.outcome = { result, failureOf };
    result.then(this.settleFirst.resolve, this.settleFirst.reject).finally(() => {
      if (this.id !== null) return;
      // Answered before any round: a question still being written is moot.
      this.ended = true;
      this.detach();
    });
    return this.first;
  }

  private async asked(request: JsonRpcRequest): Promise<void> {
    if (this.ended || this.outcome === null) return;
    const { limits, store } = this.deps;
    if (++this.questions > MAX_BRIDGED_ROUNDS) {
      this.exceeded = true;
      this.controller.abort();
      return;
    }
    const event: BridgeEvent = {
      kind: 'asked',
      id: String(request.id),
      method: request.method,
      ...(request.params ? { params: request.params } : {}),
    };
    if (this.id !== null) return this.push(event);
    const id = newId();
    const ttl = limits.timeoutMs + EXPIRY_GRACE_MS;
    if (!(await store.open(id, { owner: this.owner, method: this.method }, ttl, limits.maxPendingPerClient))) {
      this.controller.abort();
      const message = `The client has ${limits.maxPendingPerClient} calls waiting for its input already`;
      return this.settleFirst.reject(new RpcError(JSON_RPC.INTERNAL_ERROR, message, 429));
    }
    if (this.ended) return store.close(this.owner, id);
    this.id = id;
    this.detach();
    this.deps.running.add(this.controller);
    this.settleFirst.resolve(roundOf(id, [event]));
    void this.finish(this.outcome);
  }

  /** The upstream's final answer (or failure), once it comes, as the bridged call's last event. */
  private async finish(outcome: NonNullable<BridgeableCall['outcome']>): Promise<void> {
    let end: BridgeEvent;
    try {
      end = { kind: 'result', result: await outcome.result };
    } catch (err) {
      end = { kind: 'error', ...outcome.failureOf(err) };
    }
    this.ended = true;
    this.deps.running.delete(this.controller);
    await this.queue(() => this.push(end));
  }

  /** Writes an event of this call and tells every replica (a lost message only delays the retry to its next read). */
  private async push(event: BridgeEvent): Promise<void> {
    const id = this.id!;
    const { store, bus, limits } = this.deps;
    await store.push(id, event, limits.timeoutMs + EXPIRY_GRACE_MS);
    await bus.publish('mcp_relay.continued', { id });
  }

  /** Runs `step` after the writes before it (events keep their order); a failure is logged, never thrown. */
  private queue(step: () => Promise<void>): Promise<void> {
    this.writes = this.writes
      .then(step)
      .catch((err: unknown) =>
        this.deps.logger.warn(
          { method: this.method, reason: err instanceof Error ? err.message : 'unknown' },
          'bridged call event not written',
        ),
      );
    return this.writes;
  }
}

/** An input_required round asking the client the questions of `events` (keyed by their relay ids). */
function roundOf(id: string, events: readonly BridgeEvent[]): McpResult {
  const inputRequests: Record<string, unknown> = {};
  for (const event of events)
    if (event.kind === 'asked')
      inputRequests[event.id] = { method: event.method, ...(event.params ? { params: event.params } : {}) };
  return { resultType: 'input_required', inputRequests, requestState: BRIDGE_STATE_PREFIX + id };
}

/** A bridged call's end as the retry answers it. */
function endOf(end: Exclude<BridgeEvent, { kind: 'asked' }>): McpResult {
  if (end.kind === 'result') return end.result;
  const { code, message, data } = end.error;
  const detail = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined;
  throw new RpcError(code, message, end.status, detail);
}

/** The retry's `inputResponses` as answers to the relayed requests they are keyed by (-32602 when not a map of results). */
function responsesOf(value: unknown): JsonRpcResponse[] {
  if (value === undefined) return [];
  if (!isObject(value)) throw invalidParams('inputResponses must be an object');
  return Object.entries(value).map(([key, result]) => {
    if (!isObject(result)) throw invalidParams(`inputResponses.${key.slice(0, 100)} must be an object`);
    return { jsonrpc: '2.0', id: key, result };
  });
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
