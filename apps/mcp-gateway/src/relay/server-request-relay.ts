import type { AuditTrail } from '@agentgw/audit';
import type { Principal } from '@agentgw/auth';
import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import { newId, type EventBus, type Logger } from '@agentgw/core';
import {
  JSON_RPC,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type McpUpstreamClient,
  type UpstreamSession,
  type UpstreamTarget,
} from '@agentgw/mcp-client';
import { auditEntryOf } from '../tool-call/tool-call-record.js';
import type { RequestTargets, TargetRequest } from '../upstream-auth/request-targets.js';
import type { RelayedRequest, RelayStore } from './relay-store.js';
import { BusWakeups } from '../bus-wakeups.js';

type UpstreamRelayed = Extract<RelayedRequest, { destination: 'upstream' }>;

/** The client end of one exchange a relayed request can be written to (the call's SSE answer). */
export interface ClientChannel {
  /** Whose answers may come back (see `clientOwner`). */
  owner: string;
  /** Writes the request on the client's stream (an answer not yet streaming switches to SSE). */
  send(request: JsonRpcRequest): void;
}

/** The call a server request arrived during: where to send it, and what it is attributed to. */
export interface RelayOrigin {
  provider: ProviderRecord;
  target: UpstreamTarget;
  principal: Principal;
  /** Null when the client cannot take a request now (a plain JSON answer, a 2026-07-28 client). */
  channel: ClientChannel | null;
  /** The relayable capabilities the client declared. */
  capabilities: Readonly<Record<string, unknown>>;
  /** The tools/call it happened in (its audit id and tool), when it did. */
  call: { auditId: string; toolName: string } | null;
}

/** How many relayed requests one client may have unanswered, how long one waits for its answer, and how often a bridged call re-reads the store without being told (a missed bus message). */
export interface RelayLimits {
  maxPendingPerClient: number;
  timeoutMs: number;
  answerFallbackMs: number;
}

/** Defaults: 16 pending per client, 5 minutes (a human may be answering an elicitation), a re-read every 2 s. */
export const RELAY_LIMITS: Readonly<RelayLimits> = Object.freeze({
  maxPendingPerClient: 16,
  timeoutMs: 5 * 60_000,
  answerFallbackMs: 2_000,
});

/** Every id the gateway mints for a relayed request starts so (anything else is not one of ours). */
export const RELAY_ID_PREFIX = 'agentgw-relay-';

/** MCP's request-timeout error code (the SDKs' RequestTimeout). */
const REQUEST_TIMEOUT = -32001;
/** The store keeps an entry this much past the timeout, so the replica that armed the timer still finds it to answer the upstream. */
const EXPIRY_GRACE_MS = 30_000;

/** What asking the client came to: its answer, a refusal (too many pending), no answer in time, or the client went away. */
export type AskOutcome =
  | { kind: 'answered'; response: JsonRpcResponse }
  | { kind: 'refused'; message: string }
  | { kind: 'timeout' }
  | { kind: 'gone' };

/** The client capability each relayable server request needs. */
const CAPABILITY_OF: Readonly<Record<string, string>> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};
/** Server requests that act for the user (a model call, a question to them): audited and attributed to their call. */
const AUDITED: ReadonlySet<string> = new Set(['sampling/createMessage', 'elicitation/create']);

/** Who POSTed a client's answers, and their request's headers (a `token_exchange` provider exchanges its bearer). */
export type RelayCaller = Pick<TargetRequest, 'principal' | 'requestId' | 'headers'>;

/** Who a client is for routing its answers: its session, else (sessionless) its identity. */
export const clientOwner = (sid: string | null, principal: Principal): string =>
  sid !== null ? `s:${sid}` : `p:${JSON.stringify([principal.userId, principal.agentId, principal.endUserId])}`;

const refusal = (id: JsonRpcId, code: number, message: string): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

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
 * request is sent to the client under a gateway-minted id, the mapping (id → provider, upstream
 * session, upstream id, client) kept in the relay store; the client's answer, POSTed to any
 * replica, is taken from the store there and POSTed to the upstream on its session. A client
 * that did not declare the capability, cannot take a request now, or has too many pending gets
 * none: the upstream is answered with an error at once. Unanswered ones are answered with a
 * timeout error by the replica that relayed them.
 */
export class ServerRequestRelay {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** This replica's calls waiting on bridged answers, woken by `mcp_relay.answered`. */
  private readonly answers: BusWakeups<'mcp_relay.answered'>;

  constructor(
    private readonly deps: RelayDeps,
    private readonly limits: RelayLimits = RELAY_LIMITS,
  ) {
    this.answers = new BusWakeups(deps.bus, 'mcp_relay.answered', ({ id }) => id);
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
      ? await this.auditOpened(origin, { jsonrpc: '2.0', id, ...request })
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
      await this.auditFinished(auditId, { status: 'failed', error: message });
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
          const outcome =
            'result' in response
              ? { status: 'completed' as const, result: response.result }
              : { status: 'failed' as const, error: response.error.message };
          await this.auditFinished(auditId, outcome);
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
    await this.auditFinished(auditId, { status: 'failed', error: 'The client did not answer in time' });
    return signal.aborted ? { kind: 'gone' } : { kind: 'timeout' };
  }

  /** Stops the timeouts of this replica (shutdown; their upstreams time out on their own) and its wake-ups (waiting calls fall back to their timers). */
  async stop(): Promise<void> {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
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
    if (origin.channel === null || !(capability in origin.capabilities)) {
      return answer(
        refusal(
          request.id,
          JSON_RPC.METHOD_NOT_FOUND,
          `The client cannot take ${request.method} here (it did not declare ${capability}, or its answer is not a stream)`,
        ),
      );
    }
    const id = RELAY_ID_PREFIX + newId();
    const auditId = AUDITED.has(request.method) ? await this.auditOpened(origin, request) : null;
    const entry: UpstreamRelayed = {
      owner: origin.channel.owner,
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
        this.auditFinished(auditId, { status: 'failed', error: message }),
      ]);
      return;
    }
    this.arm(id, entry, origin.target);
    origin.channel.send({
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
    this.disarm(response.id);
    const upstream: JsonRpcResponse =
      'result' in response
        ? { jsonrpc: '2.0', id: entry.upstreamId, result: response.result }
        : { jsonrpc: '2.0', id: entry.upstreamId, error: response.error };
    const outcome =
      'result' in response
        ? { status: 'completed' as const, result: response.result }
        : { status: 'failed' as const, error: response.error.message };
    await Promise.all([this.answerUpstream(entry, caller, upstream), this.auditFinished(entry.auditId, outcome)]);
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

  /** Answers the upstream with a timeout error when the client has not answered in time (unless another replica delivered it). */
  private arm(id: string, entry: UpstreamRelayed, target: UpstreamTarget): void {
    const timer = setTimeout(() => {
      this.timers.delete(id);
      void this.expire(id, entry, target).catch((err: unknown) => this.failed(entry.providerId, entry.method, err));
    }, this.limits.timeoutMs);
    timer.unref();
    this.timers.set(id, timer);
  }

  private disarm(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
  }

  private async expire(id: string, entry: UpstreamRelayed, target: UpstreamTarget): Promise<void> {
    if (!(await this.deps.store.take(entry.owner, id))) return;
    const message = 'The client did not answer in time';
    await Promise.all([
      this.deps.client.respond(target, entry.upstream, refusal(entry.upstreamId, REQUEST_TIMEOUT, message)),
      this.auditFinished(entry.auditId, { status: 'failed', error: message }),
    ]);
  }

  /** The relayed request's own audit record: who, which provider, what it asked, and the call it belongs to. */
  private auditOpened(origin: Omit<RelayOrigin, 'target'>, request: JsonRpcRequest): Promise<string> {
    const args = {
      relayedFor: origin.call?.auditId ?? null,
      tool: origin.call?.toolName ?? null,
      params: request.params ?? {},
    };
    return this.deps.audit.open(
      auditEntryOf(
        { principal: origin.principal, auditId: newId(), toolName: request.method, arguments: args },
        origin.provider.id,
        'pending',
      ),
    );
  }

  private async auditFinished(
    auditId: string | null,
    outcome: { status: 'completed' | 'failed'; result?: unknown; error?: string },
  ): Promise<void> {
    if (auditId === null) return;
    await this.deps.audit
      .update(auditId, outcome)
      .catch((err: unknown) => this.deps.logger.error({ err, auditId }, 'relayed request audit update failed'));
  }

  private failed(providerId: string, method: string, err: unknown): void {
    this.deps.logger.warn(
      { providerId, method, reason: err instanceof Error ? err.message : 'unknown' },
      'server request relay failed',
    );
  }
}
