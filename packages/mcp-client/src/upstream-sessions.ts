import { clientCapabilitiesKey } from './client-capabilities.js';
import type { Deadline } from './deadline.js';
import { McpUpstreamError } from './errors.js';
import {
  LATEST_LEGACY_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSION,
  type JsonRpcResponse,
} from './protocol.js';
import type { UpstreamCallOptions, UpstreamSession, UpstreamTarget } from './upstream-call.js';
import { MAX_REMEMBERED_ENDPOINTS, type UpstreamExchange } from './upstream-exchange.js';

type Era = { kind: 'modern' } | { kind: 'legacy'; protocolVersion: string };

/** A session shared by callers without their own, for one target key and principal. */
interface SharedSession {
  /** The target's key (negotiation stays per key; sessions are per key and principal). */
  key: string;
  /** The target it was opened with (its auth and identity headers close it). */
  target: UpstreamTarget;
  session: Promise<UpstreamSession>;
  /** The session once open, so close() finds it without waiting. */
  opened: UpstreamSession | null;
}

/**
 * Which revision each upstream speaks and the sessions opened on it: `server/discover` first,
 * else `initialize`, remembered per target key with what the upstream offers; and the bounded
 * map of sessions shared by calls that bring none (least recently used ended first), so a
 * busy gateway opens one session per target, principal and capability set, not one per call.
 */
export class UpstreamSessions {
  private readonly eras = new Map<string, Era>();
  /** What each target key's upstream said it offers (its initialize or server/discover `capabilities`). */
  private readonly offered = new Map<string, Readonly<Record<string, unknown>>>();
  /** Least recently used first (a use moves an entry to the end). */
  private readonly sharedSessions = new Map<string, SharedSession>();

  constructor(
    private readonly exchange: UpstreamExchange,
    private readonly maxSharedSessions: number,
  ) {}

  /** The session shared by calls to `target` (its principal and capability set) that bring none, opened on first use. */
  async shared(target: UpstreamTarget, deadline: Deadline, options: UpstreamCallOptions): Promise<UpstreamSession> {
    const key = keyOf(target);
    const era = this.eras.get(key);
    if (era?.kind === 'modern') return { protocolVersion: MODERN_PROTOCOL_VERSION, sessionId: null };
    const slot = slotOf(key, target, options.clientCapabilities);
    const shared = this.sharedSessions.get(slot);
    if (shared) {
      // Most recently used last: eviction takes the first.
      this.sharedSessions.delete(slot);
      this.sharedSessions.set(slot, shared);
      return shared.session;
    }
    const entry: SharedSession = { key, target, session: this.open(target, deadline, options), opened: null };
    this.sharedSessions.set(slot, entry);
    entry.session.then(
      (session) => (entry.opened = session),
      // A failed open must not poison later calls.
      () => {
        if (this.sharedSessions.get(slot) === entry) this.sharedSessions.delete(slot);
      },
    );
    if (this.sharedSessions.size > this.maxSharedSessions) this.evictSharedSession();
    return entry.session;
  }

  /** A session in place of a stale one (expired upstream, or a stateless upstream now speaking sessions): the era learnt again where it changed. */
  async renegotiate(
    target: UpstreamTarget,
    stale: UpstreamSession,
    options: UpstreamCallOptions,
    deadline: Deadline,
  ): Promise<UpstreamSession> {
    const key = keyOf(target);
    if (stale.sessionId === null) this.eras.delete(key);
    const slot = slotOf(key, target, options.clientCapabilities);
    const shared = this.sharedSessions.get(slot);
    if (shared && (await shared.session.catch(() => null))?.sessionId === stale.sessionId)
      this.sharedSessions.delete(slot);
    if (options.session === undefined) return this.shared(target, deadline, options);
    return this.open(target, deadline, options);
  }

  /** Opens a conversation in the era remembered for the target, else the one negotiated now (see `target.era` for the order). */
  async open(
    target: UpstreamTarget,
    deadline: Deadline,
    options: Pick<UpstreamCallOptions, 'clientCapabilities'>,
  ): Promise<UpstreamSession> {
    const key = keyOf(target);
    const known = this.eras.get(key);
    if (known === undefined && target.era === 'legacy') {
      // A session where the upstream offers one; a 2026-07-28-only upstream refuses initialize, and is spoken to on its own wire.
      const session = await this.initialize(target, deadline, options.clientCapabilities ?? {}).catch(
        (err: unknown) => {
          if (err instanceof McpUpstreamError && (err.kind === 'http' || err.kind === 'protocol')) return null;
          throw err;
        },
      );
      if (session) return session;
    }
    if (known?.kind !== 'legacy') {
      const modern = { protocolVersion: MODERN_PROTOCOL_VERSION, sessionId: null };
      const probe = await this.exchange.call(target, modern, 'server/discover', undefined, deadline, options);
      const versions =
        probe.response && 'result' in probe.response ? probe.response.result.supportedVersions : undefined;
      if (probe.status < 300 && Array.isArray(versions) && versions.includes(MODERN_PROTOCOL_VERSION)) {
        this.eras.set(key, { kind: 'modern' });
        this.offer(key, probe.response);
        return modern;
      }
    }
    return this.initialize(target, deadline, options.clientCapabilities ?? {});
  }

  /** Ends a session upstream (HTTP DELETE) and stops sharing it; a stateless upstream has nothing to end. Never throws. */
  async close(target: UpstreamTarget, session: UpstreamSession): Promise<void> {
    if (session.sessionId === null) return;
    await this.exchange.end(target, session.sessionId, session.protocolVersion);
    for (const [slot, shared] of this.sharedSessions) {
      if (shared.opened?.sessionId === session.sessionId) this.sharedSessions.delete(slot);
    }
  }

  /** What the target's upstream offered when a conversation was opened with it, if one was. */
  offeredBy(target: UpstreamTarget): Readonly<Record<string, unknown>> | undefined {
    return this.offered.get(keyOf(target));
  }

  /** The era remembered for a target, if any (for diagnostics and tests). */
  knownProtocol(target: UpstreamTarget): string | null {
    const era = this.eras.get(keyOf(target));
    if (!era) return null;
    return era.kind === 'modern' ? MODERN_PROTOCOL_VERSION : era.protocolVersion;
  }

  /** Forgets what a target speaks and its shared sessions (its endpoint or credentials changed). */
  forget(target: UpstreamTarget | string): void {
    const key = typeof target === 'string' ? target : keyOf(target);
    this.eras.delete(key);
    this.offered.delete(key);
    for (const [slot, shared] of this.sharedSessions) if (shared.key === key) this.sharedSessions.delete(slot);
  }

  /** Drops the least recently used shared session and ends it upstream (in the background). */
  private evictSharedSession(): void {
    const [slot, oldest] = this.sharedSessions.entries().next().value as [string, SharedSession];
    this.sharedSessions.delete(slot);
    oldest.session.then(
      (session) => this.close(oldest.target, session),
      () => undefined,
    );
  }

  /** The session handshake: `initialize` offering the newest session revision, then `notifications/initialized`. */
  private async initialize(
    target: UpstreamTarget,
    deadline: Deadline,
    capabilities: Record<string, unknown>,
  ): Promise<UpstreamSession> {
    const key = keyOf(target);
    const bootstrap = { protocolVersion: LATEST_LEGACY_VERSION, sessionId: null };
    const params = { protocolVersion: LATEST_LEGACY_VERSION, capabilities, clientInfo: this.exchange.clientInfo };
    const init = await this.exchange.call(
      target,
      bootstrap,
      'initialize',
      params,
      deadline,
      {},
      { initializing: true },
    );
    if (!init.response || init.status >= 300)
      throw new McpUpstreamError('http', `upstream answered initialize with HTTP ${init.status}`, init.status);
    if ('error' in init.response)
      throw new McpUpstreamError('protocol', `upstream refused initialize (${init.response.error.code})`);
    const version = init.response.result.protocolVersion;
    if (typeof version !== 'string' || !(LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
      throw new McpUpstreamError('protocol', 'upstream chose a protocol version the gateway does not speak');
    }
    const session = { protocolVersion: version, sessionId: init.sessionId };
    await this.exchange.send(target, session, { jsonrpc: '2.0', method: 'notifications/initialized' }, deadline);
    this.eras.set(key, { kind: 'legacy', protocolVersion: version });
    this.offer(key, init.response);
    return session;
  }

  /** Remembers the capabilities an initialize or server/discover result named (an object; anything else is none). */
  private offer(key: string, response: JsonRpcResponse | null): void {
    const offered = response && 'result' in response ? response.result.capabilities : undefined;
    const capabilities = typeof offered === 'object' && offered !== null && !Array.isArray(offered) ? offered : {};
    // Keys are the targets' (a handful per provider); the bound only keeps a misuse from growing it.
    if (this.offered.size >= MAX_REMEMBERED_ENDPOINTS) this.offered.clear();
    this.offered.set(key, capabilities as Record<string, unknown>);
  }
}

const keyOf = (target: UpstreamTarget): string => target.key ?? target.endpoint;

/** Where a target's shared session is kept: its key, its principal when it has one, and the client capabilities it was opened with. */
const slotOf = (key: string, target: UpstreamTarget, capabilities: Record<string, unknown> | undefined): string => {
  const slot = target.principal === undefined ? key : `${key}\u0000${target.principal}`;
  const set = capabilities === undefined ? '' : clientCapabilitiesKey(capabilities);
  return set === '' ? slot : `${slot}\u0000${set}`;
};
