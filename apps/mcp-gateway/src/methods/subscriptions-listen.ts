import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import {
  JSON_RPC,
  type JsonRpcId,
  type JsonRpcNotification,
  type McpUpstreamClient,
  type UpstreamSession,
  type UpstreamTarget,
} from '@agentgw/mcp-client';
import type { TaskRef } from '../extensions/task-ids.js';
import type { ListChangedMethod, ListChangeFollowing } from '../gateway-list-changes.js';
import type { McpRequestContext } from '../mcp-context.js';
import { ClientGone, GATEWAY_RPC, RpcError } from '../rpc-errors.js';
import type { FollowedHeldTask, HeldTaskFollowing } from '../tool-call/held-task-notices.js';
import { agreedFilter, LIST_FLAGS, parseListenFilter, type ListenFilter } from './listen-filter.js';

const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

type Result = Record<string, unknown>;

/** How long one listen stays open before it ends gracefully (the client listens again, authenticated and checked anew). */
export const LISTEN_LIFETIME_MS = 15 * 60_000;
/** Listens one caller (user, else agent) may hold open on a replica; one more is 429 -32029. */
export const MAX_LISTENS_PER_CALLER = 16;
/** The first wait before an upstream listen that ended is opened again; it doubles up to REOPEN_MAX_MS, and starts over after a listen that lasted that long. */
export const REOPEN_FIRST_MS = 250;
export const REOPEN_MAX_MS = 30_000;

/** What a listen needs from the MCP methods (mcp-methods.ts): the upstream client, a provider's target for the caller, task ids, held tasks' decisions, and the list caches to tell. */
export interface ListenAccess {
  client: McpUpstreamClient;
  /** The provider's target for the caller (with their own auth for a per-user provider); null when the caller is refused there (not connected). */
  targetOf(provider: ProviderRecord, ctx: McpRequestContext): Promise<UpstreamTarget | null>;
  /** The task an id names when it is the caller's (null: foreign, forged, or a kind not listened for). */
  openTask(taskId: string, principal: Principal): TaskRef | null;
  /** Held-call tasks' decisions, told as their tasks (tool-call/held-task-notices.ts); ready once resolved. */
  followHeld(tasks: readonly FollowedHeldTask[], tell: (task: Result) => void): Promise<HeldTaskFollowing>;
  /** A notification an upstream sent (the list caches drop what it says changed). */
  noticed(providerId: string, method: string): void;
  /** The gateway's own list changes (providers, access rules, tool pins), as a session's GET stream is told of them. */
  listChanges(announce: (method: ListChangedMethod) => void): ListChangeFollowing;
}

/**
 * `subscriptions/listen` (2026-07-28) as a fan-in: acknowledged on the client's SSE answer once
 * the gateway's own list changes are followed, then a listen is opened on every provider given (a
 * 2026-07-28 upstream: its own `subscriptions/listen`; a session upstream: a session of its own,
 * `resources/subscribe` for the uris and its GET stream) and reopened with bounded backoff when it
 * ends early; what they send that the filter asked for is passed on under the client's
 * subscription id (task ids as the client knows them), and so are the gateway's own list changes
 * and its held-call tasks' decisions (`notifications/tasks`, from whichever replica decided).
 * It ends when the client goes (upstream listens aborted, sessions closed) or after
 * LISTEN_LIFETIME_MS with a complete result.
 */
export class SubscriptionsListen {
  private readonly open = new Map<string, number>();

  constructor(private readonly access: ListenAccess) {}

  async handle(
    id: JsonRpcId,
    params: Result,
    ctx: McpRequestContext,
    providers: readonly ProviderRecord[],
  ): Promise<Result> {
    const filter = parseListenFilter(params.notifications, ctx.principal, this.access.openTask);
    const notify = ctx.notify;
    if (notify === null)
      throw new RpcError(
        JSON_RPC.INVALID_REQUEST,
        'subscriptions/listen is answered as a stream: the client must accept text/event-stream',
        406,
      );
    const caller =
      ctx.principal.userId !== null ? `user:${ctx.principal.userId}` : `agent:${ctx.principal.agentId ?? ''}`;
    const held = this.open.get(caller) ?? 0;
    if (held >= MAX_LISTENS_PER_CALLER) {
      const message = `At most ${MAX_LISTENS_PER_CALLER} open subscriptions per caller`;
      throw new RpcError(GATEWAY_RPC.RATE_LIMITED, message, 429, { code: 'RATE_LIMITED', message, retryAfter: 5 });
    }
    this.open.set(caller, held + 1);
    const meta = { [META_SUBSCRIPTION_ID]: id };
    const send = (method: string, rest: Result = {}) =>
      notify({ jsonrpc: '2.0', method, params: { ...rest, _meta: meta } });
    const asked = new Set(
      Object.entries(LIST_FLAGS).flatMap(([flag, method]) =>
        filter.flags[flag as keyof typeof LIST_FLAGS] ? [method] : [],
      ),
    );
    const own = asked.size > 0 ? this.access.listChanges((method) => void (asked.has(method) && send(method))) : null;
    // A held task's decision told while the acknowledgement is not out yet waits for it.
    let acknowledged = () => {};
    const afterAck = new Promise<void>((resolve) => (acknowledged = resolve));
    const decisions =
      filter.heldTasks.length > 0
        ? await this.access.followHeld(
            filter.heldTasks,
            (task) => void afterAck.then(() => send('notifications/tasks', task)),
          )
        : null;
    await own?.ready;
    send('notifications/subscriptions/acknowledged', { notifications: agreedFilter(filter) });
    acknowledged();
    const stop = new AbortController();
    const ended = new Promise<'client' | 'lifetime'>((resolve) => {
      const timer = setTimeout(() => resolve('lifetime'), LISTEN_LIFETIME_MS);
      const gone = () => resolve('client');
      if (ctx.signal.aborted) gone();
      ctx.signal.addEventListener('abort', gone, { once: true });
      stop.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
    });
    const listeners = providers.map((provider) =>
      this.keepListening(provider, filter, ctx, stop.signal, (n) => this.pass(provider, n, filter, send)),
    );
    try {
      const why = await ended;
      if (why === 'client') throw new ClientGone();
      return { _meta: meta };
    } finally {
      own?.stop();
      decisions?.stop();
      stop.abort();
      await Promise.all(listeners);
      const left = (this.open.get(caller) ?? 1) - 1;
      if (left > 0) this.open.set(caller, left);
      else this.open.delete(caller);
    }
  }

  /**
   * One provider's listen, opened again whenever it ends or fails before `signal` (its lifetime,
   * a dropped connection, a restart), after REOPEN_FIRST_MS doubling up to REOPEN_MAX_MS; not
   * after the upstream refused it (a JSON-RPC error, a session upstream without a GET stream).
   */
  private async keepListening(
    provider: ProviderRecord,
    filter: ListenFilter,
    ctx: McpRequestContext,
    signal: AbortSignal,
    onNotification: (n: JsonRpcNotification) => void,
  ): Promise<void> {
    let wait = REOPEN_FIRST_MS;
    while (!signal.aborted) {
      const began = Date.now();
      const ended = await this.listenOn(provider, filter, ctx, signal, onNotification).catch(() => 'failed' as const);
      if (ended === 'refused') return;
      if (Date.now() - began >= REOPEN_MAX_MS) wait = REOPEN_FIRST_MS;
      await pause(wait, signal);
      wait = Math.min(wait * 2, REOPEN_MAX_MS);
    }
  }

  /** One provider's notifications, until `signal` or its end: its own subscriptions/listen, else (a session upstream) subscriptions and its GET stream. */
  private async listenOn(
    provider: ProviderRecord,
    filter: ListenFilter,
    ctx: McpRequestContext,
    signal: AbortSignal,
    onNotification: (n: JsonRpcNotification) => void,
  ): Promise<'ended' | 'refused'> {
    const { client } = this.access;
    const target = await this.access.targetOf(provider, ctx);
    if (target === null) return 'refused';
    const session = await client.open(target, { signal, clientCapabilities: ctx.clientCapabilities });
    if (session.sessionId === null) {
      const taskIds = filter.tasks.filter((t) => t.ref.providerId === provider.id).map((t) => t.ref.upstreamTaskId);
      const notifications = {
        ...filter.flags,
        ...(filter.resourceSubscriptions.length > 0 ? { resourceSubscriptions: filter.resourceSubscriptions } : {}),
        ...(taskIds.length > 0 ? { taskIds } : {}),
      };
      const { response } = await client.request(
        target,
        'subscriptions/listen',
        { notifications },
        { signal, session, timeoutMs: LISTEN_LIFETIME_MS, onNotification },
      );
      return 'error' in response ? 'refused' : 'ended';
    }
    return this.listenOnSession(target, session, filter, signal, onNotification);
  }

  private async listenOnSession(
    target: UpstreamTarget,
    session: UpstreamSession,
    filter: ListenFilter,
    signal: AbortSignal,
    onNotification: (n: JsonRpcNotification) => void,
  ): Promise<'ended' | 'refused'> {
    const { client } = this.access;
    try {
      for (const uri of filter.resourceSubscriptions)
        await client.request(target, 'resources/subscribe', { uri }, { signal, session }).catch(() => undefined);
      return (await client.listen(target, session, onNotification, signal)) === 'unsupported' ? 'refused' : 'ended';
    } finally {
      void client.close(target, session);
    }
  }

  /** A provider's notification on to the client when the filter asked for it, under the client's subscription id. */
  private pass(
    provider: ProviderRecord,
    n: JsonRpcNotification,
    filter: ListenFilter,
    send: (method: string, rest?: Result) => void,
  ): void {
    this.access.noticed(provider.id, n.method);
    const { _meta: _upstreamMeta, ...rest } = n.params ?? {};
    for (const [flag, method] of Object.entries(LIST_FLAGS))
      if (n.method === method && filter.flags[flag as keyof typeof LIST_FLAGS]) return send(method);
    if (
      n.method === 'notifications/resources/updated' &&
      typeof rest.uri === 'string' &&
      filter.resourceSubscriptions.includes(rest.uri)
    )
      return send(n.method, rest);
    if (n.method === 'notifications/tasks') {
      const task = filter.tasks.find((t) => t.ref.providerId === provider.id && t.ref.upstreamTaskId === rest.taskId);
      if (task) send(n.method, { ...rest, taskId: task.clientId });
    }
  }
}

/** Waits `ms`, or less when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
