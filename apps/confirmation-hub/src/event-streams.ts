import type { Viewer } from '@agentgw/confirmations';
import { RateLimitedError, type Clock, type ConfirmationPayload, type GatewayEvents, type Logger } from '@agentgw/core';
import { sseFrame as frame, SseStream } from '@agentgw/service-kit';

export interface EventStreamsOptions {
  /** Interval of `heartbeat` events (SSE_HEARTBEAT_MS). */
  heartbeatMs: number;
  clock: Clock;
  logger: Logger;
  /** A client that leaves more than this unread is cut off (default 256 KiB), so a stalled reader cannot grow memory. */
  maxBufferedBytes?: number;
  /** Open streams one user may hold on this replica (default 16); one more is a 429, so a client cannot exhaust sockets or memory. */
  maxStreamsPerUser?: number;
}

/** One open `GET /api/v1/stream`. */
interface Connection {
  viewer: Viewer;
  /** Service-kit's SSE writer: framing, slow-client cut-off, end on cancel or the request's abort. */
  sse: SseStream;
  /** Ends the stream when the token it was opened with expires. */
  expiry: NodeJS.Timeout | undefined;
}

const DEFAULT_MAX_STREAMS_PER_USER = 16;

/** Longest delay setTimeout honours (about 24.8 days); a later expiry is re-armed from there. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A hub event framed once (service-kit's one SSE framing), to be written to every stream of its audience. */
export const sseFrame = (event: string, id: string, data: unknown): Uint8Array => frame({ event, id, data });

/**
 * Event ids are `<epoch ms>-<n>`, and a CONFIRMATION_REQUIRED's is `<created ms>.<confirmation
 * id>`: the time part is what a reconnect's Last-Event-ID is read by, whichever replica gave it.
 */
export function parseLastEventId(header: string | undefined): { at: Date; confirmationId: string | null } | null {
  const match = header ? /^(\d{1,15})(?:-\d{1,15}|\.([A-Za-z0-9-]{1,100}))$/.exec(header.trim()) : null;
  if (!match) return null;
  return { at: new Date(Number(match[1])), confirmationId: match[2] ?? null };
}

export const requiredEventId = (payload: ConfirmationPayload): string =>
  `${Date.parse(payload.timestamp)}.${payload.id}`;

/**
 * The SSE connections of this hub replica, indexed by who may see what, so an event from the
 * bus (raised on any replica) reaches its audience without scanning every connection: the
 * user who made the call, its end user, admins, and tenant admins of its tenant. One timer
 * sends every connection's heartbeat.
 */
export class EventStreams {
  private readonly byUser = new Map<string, Set<Connection>>();
  private readonly byTenantAdmin = new Map<string, Set<Connection>>();
  private readonly admins = new Set<Connection>();
  private readonly all = new Set<Connection>();
  private heartbeat: NodeJS.Timeout | undefined;
  private sequence = 0;
  private stopped = false;

  constructor(private readonly options: EventStreamsOptions) {}

  /** Open connections on this replica. */
  get size(): number {
    return this.all.size;
  }

  /** A fresh id for an event that is not a CONFIRMATION_REQUIRED. */
  nextId(): string {
    this.sequence += 1;
    return `${this.options.clock.now().getTime()}-${this.sequence}`;
  }

  /**
   * Opens a stream for `viewer`; `connected` is its first event. `signal` (the request's), the
   * client closing the response, `until` (the expiry of the token it was opened with) and
   * `closeUser` end it: a stream never outlives the credential that opened it.
   */
  open(
    viewer: Viewer,
    signal: AbortSignal,
    until: Date,
  ): { stream: ReadableStream<Uint8Array>; send: (frame: Uint8Array) => void } {
    if (this.stopped) throw new Error('event streams are stopped');
    const limit = this.options.maxStreamsPerUser ?? DEFAULT_MAX_STREAMS_PER_USER;
    if (viewer.userId !== null && (this.byUser.get(viewer.userId)?.size ?? 0) >= limit) {
      throw new RateLimitedError(`At most ${limit} open event streams per user`, 5);
    }
    let registered: Connection | undefined;
    const sse = new SseStream({
      signal,
      maxBufferedBytes: this.options.maxBufferedBytes,
      onEnd: (why) => {
        if (why === 'too-slow')
          this.options.logger.warn({ userId: viewer.userId }, 'SSE client not reading; closing its stream');
        if (registered) this.remove(registered);
      },
    });
    // A request already aborted ends the writer at once: nothing to register.
    if (!sse.open) return { stream: sse.body, send: () => undefined };
    const connection: Connection = (registered = { viewer, sse, expiry: undefined });
    this.add(connection);
    this.endAt(connection, until);
    this.write(
      connection,
      sseFrame('connected', this.nextId(), {
        userId: viewer.userId,
        timestamp: this.options.clock.now().toISOString(),
      }),
    );
    return { stream: sse.body, send: (bytes) => this.write(connection, bytes) };
  }

  /** CONFIRMATION_REQUIRED to everyone on this replica who may see it. */
  deliverRequired(payload: ConfirmationPayload): void {
    this.broadcast(payload, sseFrame('CONFIRMATION_REQUIRED', requiredEventId(payload), payload));
  }

  /** CONFIRMATION_RESOLVED `{ id, confirmed, status, timestamp }` to the same audience; `status` as stored (a timeout is `rejected`). */
  deliverResolved(event: GatewayEvents['confirmation.resolved']): void {
    const status = event.status === 'expired' && event.reason === 'timeout' ? 'rejected' : event.status;
    const data = { id: event.id, confirmed: event.status === 'confirmed', status, timestamp: event.timestamp };
    this.broadcast(event, sseFrame('CONFIRMATION_RESOLVED', this.nextId(), data));
  }

  /**
   * TOOL_DEFINITION_CHANGED (issue 24.3) to admins and the provider's tenant admins: a definition
   * quarantined, approved, kept blocked or back to its pin, a rename, a provider's pinning mode.
   * A plain first-sight pin is not news.
   */
  deliverToolPin(event: GatewayEvents['tool_pins.changed']): void {
    if (event.change === 'pinned' && event.renamedFrom === null) return;
    this.broadcast(
      { userId: null, endUserId: null, tenantId: event.tenantId },
      sseFrame('TOOL_DEFINITION_CHANGED', this.nextId(), event),
    );
  }

  /**
   * Ends every stream `userId` holds on this replica (its roles, tenant, password or existence
   * changed): what it may see is decided again when the client reconnects and authenticates.
   */
  closeUser(userId: string): void {
    for (const connection of [...(this.byUser.get(userId) ?? [])]) this.end(connection);
  }

  /** Starts the heartbeat timer. */
  start(): void {
    this.heartbeat ??= setInterval(() => this.beat(), this.options.heartbeatMs);
  }

  /** Ends every stream (the clients see the end of the response) and the heartbeat. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    for (const connection of [...this.all]) this.end(connection);
  }

  /** Closes a stream from this side: the client sees the end of the response (and the writer's onEnd removes it). */
  private end(connection: Connection): void {
    connection.sse.close();
  }

  /** Arms the stream's end at `until` (re-armed past setTimeout's limit). */
  private endAt(connection: Connection, until: Date): void {
    const delay = until.getTime() - this.options.clock.now().getTime();
    if (delay <= 0) {
      this.end(connection);
      return;
    }
    connection.expiry = setTimeout(() => this.endAt(connection, until), Math.min(delay, MAX_TIMER_MS));
    connection.expiry.unref();
  }

  private beat(): void {
    const started = performance.now();
    const frame = sseFrame('heartbeat', this.nextId(), { timestamp: this.options.clock.now().toISOString() });
    for (const connection of this.all) this.write(connection, frame);
    this.options.logger.debug(
      { streams: this.all.size, ms: Math.round(performance.now() - started) },
      'heartbeat sent',
    );
  }

  private broadcast(
    parties: { userId: string | null; endUserId: string | null; tenantId: string | null },
    frame: Uint8Array,
  ): void {
    const audience = new Set<Connection>(this.admins);
    for (const userId of [parties.userId, parties.endUserId]) {
      if (userId !== null) for (const c of this.byUser.get(userId) ?? []) audience.add(c);
    }
    if (parties.tenantId !== null) for (const c of this.byTenantAdmin.get(parties.tenantId) ?? []) audience.add(c);
    for (const connection of audience) this.write(connection, frame);
  }

  /** One framed event to one stream; the writer cuts off (and onEnd removes) a client past maxBufferedBytes unread. */
  private write(connection: Connection, bytes: Uint8Array): void {
    connection.sse.write(bytes);
  }

  private add(connection: Connection): void {
    const { viewer } = connection;
    this.all.add(connection);
    if (viewer.roles.includes('admin')) this.admins.add(connection);
    if (viewer.userId !== null) addTo(this.byUser, viewer.userId, connection);
    if (viewer.roles.includes('tenant_admin') && viewer.tenantId !== null)
      addTo(this.byTenantAdmin, viewer.tenantId, connection);
  }

  /** Forgets a stream that ended (called once, by its writer's onEnd). */
  private remove(connection: Connection): void {
    clearTimeout(connection.expiry);
    const { viewer } = connection;
    this.all.delete(connection);
    this.admins.delete(connection);
    if (viewer.userId !== null) removeFrom(this.byUser, viewer.userId, connection);
    if (viewer.tenantId !== null) removeFrom(this.byTenantAdmin, viewer.tenantId, connection);
  }
}

function addTo(index: Map<string, Set<Connection>>, key: string, connection: Connection): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(connection);
}

function removeFrom(index: Map<string, Set<Connection>>, key: string, connection: Connection): void {
  const set = index.get(key);
  if (!set) return;
  set.delete(connection);
  if (set.size === 0) index.delete(key);
}
