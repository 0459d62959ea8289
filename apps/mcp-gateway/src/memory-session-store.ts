import type { UpstreamSession } from '@agentgw/mcp-client';
import type { Clock } from '@agentgw/core';
import {
  OPEN_FIELD,
  SESSION_LIMITS,
  upstreamField,
  upstreamsOf,
  type EvictedSession,
  type SessionLimits,
  type SessionStore,
} from './session-store.js';

/** At most one full sweep of expired sessions per this long (a full in-process store does not scan on every create). */
const SWEEP_INTERVAL_MS = 60_000;

/** One session of the in-process store: its fields as the Redis hash holds them, its owner, when it expires. */
interface MemoryEntry {
  fields: Record<string, string>;
  owner: string;
  expiresAt: number;
}

/** The single-process store: a Map in creation order, with each owner's sessions indexed. */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, MemoryEntry>();
  private readonly owners = new Map<string, Set<string>>();
  private readonly limits: SessionLimits;
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    limits: Partial<SessionLimits> = {},
  ) {
    this.limits = { ...SESSION_LIMITS, ...limits };
  }

  private live(sid: string): MemoryEntry | null {
    const entry = this.sessions.get(sid);
    if (!entry) return null;
    if (entry.expiresAt <= this.clock.now().getTime()) {
      this.drop(sid, entry);
      return null;
    }
    return entry;
  }

  private drop(sid: string, entry: MemoryEntry): EvictedSession {
    this.sessions.delete(sid);
    const owned = this.owners.get(entry.owner);
    owned?.delete(sid);
    if (owned?.size === 0) this.owners.delete(entry.owner);
    return { sid, owner: entry.owner, upstreams: upstreamsOf(entry.fields) };
  }

  async create(sid: string, owner: string) {
    const now = this.clock.now().getTime();
    const evicted: EvictedSession[] = [];
    const owned = this.owners.get(owner) ?? new Set<string>();
    for (const other of owned) this.live(other);
    while (owned.size >= this.limits.maxPerOwner) {
      const oldest = this.leastRecentlyUsed(owned);
      if (oldest === null) break;
      evicted.push(this.drop(...oldest));
    }
    if (this.sessions.size >= this.limits.maxSessions) {
      if (now - this.sweptAt >= SWEEP_INTERVAL_MS) this.sweep(now);
      for (const [other, entry] of this.sessions) {
        if (this.sessions.size < this.limits.maxSessions) break;
        const dropped = this.drop(other, entry);
        // An expired session merely goes; a live one is evicted (its upstreams to be closed).
        if (entry.expiresAt > now) evicted.push(dropped);
      }
    }
    this.sessions.set(sid, { fields: { [OPEN_FIELD]: '1' }, owner, expiresAt: now + this.limits.idleTtlMs });
    owned.add(sid);
    this.owners.set(owner, owned);
    return evicted;
  }

  async get(sid: string) {
    const entry = this.live(sid);
    if (!entry) return null;
    entry.expiresAt = this.clock.now().getTime() + this.limits.idleTtlMs;
    return upstreamsOf(entry.fields);
  }

  async setUpstream(sid: string, providerId: string, session: UpstreamSession) {
    const entry = this.live(sid);
    if (!entry) return;
    entry.fields[upstreamField(providerId)] = JSON.stringify(session);
    entry.expiresAt = this.clock.now().getTime() + this.limits.idleTtlMs;
  }

  async end(sid: string) {
    const entry = this.live(sid);
    return entry ? this.drop(sid, entry).upstreams : null;
  }

  async close() {
    this.sessions.clear();
    this.owners.clear();
  }

  /** The owner's session used longest ago (null when it holds none). */
  private leastRecentlyUsed(owned: ReadonlySet<string>): [string, MemoryEntry] | null {
    let oldest: [string, MemoryEntry] | null = null;
    for (const sid of owned) {
      const entry = this.sessions.get(sid);
      if (entry && (oldest === null || entry.expiresAt < oldest[1].expiresAt)) oldest = [sid, entry];
    }
    return oldest;
  }

  /** Drops expired sessions (only when the store is full, at most once per SWEEP_INTERVAL_MS). */
  private sweep(now: number) {
    this.sweptAt = now;
    for (const [sid, entry] of this.sessions) if (entry.expiresAt <= now) this.drop(sid, entry);
  }
}
