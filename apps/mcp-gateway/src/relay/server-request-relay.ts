import type { AuditTrail } from '@agentgw/audit';
import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import { newId, type EventBus, type Logger } from '@agentgw/core';
import {
  JSON_RPC,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type McpUpstreamClient,
  type UpstreamSession,
  type UpstreamTarget,
} from '@agentgw/mcp-client';
import type { RequestTargets, TargetRequest } from '../upstream-auth/request-targets.js';
import type { RelayedRequest, RelayStore } from './relay-store.js';
import { BusWakeups } from '../bus-wakeups.js';
import { RelayAudit, relayAuditOutcomeOf } from './relay-audit.js';
import { RelayDeadlines } from './relay-deadlines.js';
import {
  AUDITED,
  CAPABILITY_OF,
  EXPIRY_GRACE_MS,
  RELAY_ID_PREFIX,
  RELAY_LIMITS,
  refusal,
  type AskOutcome,
  type ClientChannel,
  type RelayCaller,
  type RelayLimits,
  type RelayOrigin,
  type UpstreamRelayed,
} from './relay-contract.js';

interface RelayDeps {
  store: RelayStore;
  client: Pick<McpUpstreamClient, 'respond'>;
  catalog: Pick<Catalog, 'providers'>;
  /** Builds the target a client's answer goes upstream on (the answering user's own auth for a per-user provider). */
  targets: Pick<RequestTargets, 'forRequest'>;
  audit: AuditTrail;
  logger: Logger;
  /** Tells the call waiting on a bridged request, on whichever replica, that its answer is in the store. */
  bus: Pick<EventBus, 'publish' | 'subscribe'>;
}

/**
 * Server-to-client requests (sampling, elicitation, roots) relayed both ways. An upstream's
 * request is sent to the client under a gateway-minted id (on the call's stream, or for a
 * 2026-07-28 client as an input_required round: relay/legacy-request-bridge.ts), the mapping (id → provider, upstream
 * session, upstream id, client) kept in the relay store; the client's answer, POSTed to any
 * replica, is taken from the store there and POSTed to the upstream on its session. A client
 * that did not declare the capability, cannot take a request now, or has too many pending gets
 * none: the upstream is answered with an error at once. Unanswered ones are answered with a
 * timeout error by the replica that relayed them.
 */
export class ServerRequestRelay {
  /** This replica's calls waiting on bridged answers, woken by `mcp_relay.answered`. */
  private readonly answers: BusWakeups<'mcp_relay.answered'>;
  private readonly audit: RelayAudit;
  private readonly deadlines: RelayDeadlines;

  constructor(
    private readonly deps: RelayDeps,
    private readonly limits: RelayLimits = RELAY_LIMITS,
  ) {
    this.answers = new BusWakeups(deps.bus, 'mcp_relay.answered', ({ id }) => id);
    this.audit = new RelayAudit(deps);
    this.deadlines = new RelayDeadlines(
      { ...deps, audit: this.audit, failed: (providerId, method, err) => this.failed(providerId, method, err) },
      limits.timeoutMs,
    );
  }

  /** An upstream's request during a call: passed on to the client, or answered at once. Never throws. */
  relay(origin: RelayOrigin, request: JsonRpcRequest, session: UpstreamSession): void {
    this.relayed(origin, request, session).catch((err: unknown) =>
      this.failed(origin.provider.id, request.method, err),
    );
  }

  /**
   * A client's answers to relayed requests (the responses of a POST), each sent to the upstream
   * that asked. Returns how many were not pending for this client (unknown, answered, expired).
   */
  async deliver(owner: string, caller: RelayCaller, responses: readonly JsonRpcResponse[]): Promise<number> {
    const outcomes = await Promise.all(responses.map((response) => this.deliverOne(owner, caller, response)));
    return outcomes.filter((delivered) => !delivered).length;
  }

  /**
   * A request the gateway asks the client itself (bridging an upstream's input_required result,
   * or a held call's question to the person, tool-call/client-carrier.ts):
   * sent on the client's stream under a minted id, audited like a relayed one, and the client's
   * answer (POSTed to any replica, kept in the store by `deliver`) awaited here until the timeout:
   * the store is read again at each `mcp_relay.answered` for it, and every `answerFallbackMs`.
   */
  async ask(
    origin: Omit<RelayOrigin, 'target'> & { channel: ClientChannel },
    request: { method: string; params?: Record<string, unknown> },
    signal: AbortSignal,
  ): Promise<AskOutcome> {
    const id = RELAY_ID_PREFIX + newId();
    const auditId = AUDITED.has(request.method)
      ? await this.audit.opened(origin, { jsonrpc: '2.0', id, ...request })
      : null;
    const entry: RelayedRequest = {
      owner: origin.channel.owner,
      destination: 'bridged',
      method: request.method,
      auditId,
    };
    if (
      !(await this.deps.store.put(id, entry, this.limits.timeoutMs + EXPIRY_GRACE_MS, this.limits.maxPendingPerClient))
    ) {
      const message = `The client has ${this.limits.maxPendingPerClient} server requests pending already`;
      await this.audit.finished(auditId, { status: 'failed', error: message });
      return { kind: 'refused', message };
    }
    const deadline = Date.now() + this.limits.timeoutMs;
    // Watched before the client can answer, so no wake-up is missed between two reads.
    const watch = await this.answers.watch(id);
    try {
      origin.channel.send({
        jsonrpc: '2.0',
        id,
        method: request.method,
        ...(request.params ? { params: request.params } : {}),
      });
      for (;;) {
        const response = await this.deps.store.answerOf(id);
        if (response !== null) {
          await this.audit.finished(auditId, relayAuditOutcomeOf(response));
          return { kind: 'answered', response };
        }
        const left = deadline - Date.now();
        if (left <= 0 || signal.aborted) break;
        await watch.next(Math.min(left, this.limits.answerFallbackMs), signal);
      }
    } finally {
      watch.close();
    }
    // Unanswered: the entry goes, so a late answer finds nothing.
    await this.deps.store.take(origin.channel.owner, id);
    await this.audit.finished(auditId, { status: 'failed', error: 'The client did not answer in time' });
    return signal.aborted ? { kind: 'gone' } : { kind: 'timeout' };
  }

  /** Stops the timeouts of this replica (shutdown; their upstreams time out on their own) and its wake-ups (waiting calls fall back to their timers). */
  async stop(): Promise<void> {
    this.deadlines.stop();
    await this.answers.stop();
  }

  private async relayed(origin: RelayOrigin, request: JsonRpcRequest, session: UpstreamSession): Promise<void> {
    const answer = (response: JsonRpcResponse) => this.deps.client.respond(origin.target, session, response);
    if (request.method === 'ping') return answer({ jsonrpc: '2.0', id: request.id, result: {} });
    const capability = CAPABILITY_OF[request.method];
    if (capability === undefined)
      return answer(
        refusal(request.id, JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${request.method.slice(0, 100)}`),
      );
    if (!(capability in origin.capabilities))
      return answer(refusal(request.id, JSON_RPC.METHOD_NOT_FOUND, `The client did not declare ${capability}`));
    const { channel } = origin;
    if (channel === null) {
      const reason = `The client asked for a plain JSON answer to this request, so ${request.method} cannot reach it`;
      return answer(refusal(request.id, JSON_RPC.METHOD_NOT_FOUND, reason));
    }
    const id = RELAY_ID_PREFIX + newId();
    const auditId = AUDITED.has(request.method) ? await this.audit.opened(origin, request) : null;
    const entry: UpstreamRelayed = {
      owner: channel.owner,
      destination: 'upstream',
      providerId: origin.provider.id,
      upstream: session,
      upstreamId: request.id,
      method: request.method,
      auditId,
    };
    if (
      !(await this.deps.store.put(id, entry, this.limits.timeoutMs + EXPIRY_GRACE_MS, this.limits.maxPendingPerClient))
    ) {
      const message = `The client has ${this.limits.maxPendingPerClient} server requests pending already`;
      await Promise.all([
        answer(refusal(request.id, JSON_RPC.INTERNAL_ERROR, message)),
        this.audit.finished(auditId, { status: 'failed', error: message }),
      ]);
      return;
    }
    this.deadlines.arm(id, entry, origin.target);
    channel.send({
      jsonrpc: '2.0',
      id,
      method: request.method,
      ...(request.params ? { params: request.params } : {}),
    });
  }

  /** The target an upstream of a session's own stream (upstream-server-streams.ts) is reached on for the client: the same rule as every forwarded request. */
  targetFor(provider: ProviderRecord, request: TargetRequest): Promise<UpstreamTarget> {
    return this.deps.targets.forRequest(provider, request);
  }

  private async deliverOne(owner: string, caller: RelayCaller, response: JsonRpcResponse): Promise<boolean> {
    if (typeof response.id !== 'string' || !response.id.startsWith(RELAY_ID_PREFIX)) return false;
    const entry = await this.deps.store.take(owner, response.id);
    if (!entry) return false;
    if (entry.destination === 'bridged') {
      await this.deps.store.settle(response.id, response, EXPIRY_GRACE_MS);
      // A lost message only delays the waiting call to its next fallback read.
      await this.deps.bus
        .publish('mcp_relay.answered', { id: response.id })
        .catch((err: unknown) =>
          this.deps.logger.warn(
            { method: entry.method, reason: err instanceof Error ? err.message : 'unknown' },
            'bridged answer not announced',
          ),
        );
      return true;
    }
    this.deadlines.disarm(response.id);
    const upstream: JsonRpcResponse =
      'result' in response
        ? { jsonrpc: '2.0', id: entry.upstreamId, result: response.result }
        : { jsonrpc: '2.0', id: entry.upstreamId, error: response.error };
    await Promise.all([
      this.answerUpstream(entry, caller, upstream),
      this.audit.finished(entry.auditId, relayAuditOutcomeOf(response)),
    ]);
    return true;
  }

  /**
   * Sends the client's answer to the upstream that asked, from this replica (any may: the upstream
   * session is a value), as the answering caller (their own auth for a per-user provider; one who
   * has none is logged and the upstream times the request out).
   */
  private async answerUpstream(entry: UpstreamRelayed, caller: RelayCaller, response: JsonRpcResponse): Promise<void> {
    try {
      const provider = await this.deps.catalog.providers.get(entry.providerId);
      if (!provider) return;
      const target = await this.deps.targets.forRequest(provider, { ...caller, capabilities: {} });
      await this.deps.client.respond(target, entry.upstream, response);
    } catch (err) {
      this.failed(entry.providerId, entry.method, err);
    }
  }

  private failed(providerId: string, method: string, err: unknown): void {
    this.deps.logger.warn(
      { providerId, method, reason: err instanceof Error ? err.message : 'unknown' },
      'server request relay failed',
    );
  }
}
