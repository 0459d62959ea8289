import { newId, type EventBus, type Logger } from '@agentgw/core';
import { JSON_RPC, type JsonRpcErrorObject, type JsonRpcRequest } from '@agentgw/mcp-client';
import type { McpResult } from '../mcp-context.js';
import { ClientGone, GATEWAY_RPC, RpcError } from '../rpc-errors.js';
import { roundOf } from './bridge-rounds.js';
import type { BridgeEvent, BridgeStore } from './bridge-store.js';
import { MAX_BRIDGED_ROUNDS } from './mrtr-bridge.js';
import { EXPIRY_GRACE_MS, type ClientChannel, type RelayLimits } from './relay-contract.js';

/** How a bridged call's failure reaches the client's retry: the JSON-RPC error and its HTTP status. */
export interface BridgeFailure {
  error: JsonRpcErrorObject;
  status: number;
}

/** What one bridgeable call shares with its bridge: where its events go, its limits and the calls still running here. */
export interface CallDeps {
  store: BridgeStore;
  bus: Pick<EventBus, 'publish'>;
  logger: Logger;
  limits: RelayLimits;
  running: Set<AbortController>;
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
