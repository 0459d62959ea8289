import type { UpstreamSession } from '@agentgw/mcp-client';
import type { Clock } from '@agentgw/core';
import type { Redis } from 'ioredis';

/**
 * Where a gateway session's mutable part lives: that it is still open, and the upstream
 * sessions it opened (one per provider). Redis in distributed mode, so any replica continues
 * any session; a Map in the all-in-one.
 */
export interface SessionStore {
  /** Records a new open session. */
  create(sid: string): Promise<void>;
  /** The session's upstream sessions by provider id, or null when it is unknown, ended or expired. */
  get(sid: string): Promise<Record<string, UpstreamSession> | null>;
  /** Remembers the upstream session opened for a provider (refreshes the session's lifetime). */
  setUpstream(sid: string, providerId: string, session: UpstreamSession): Promise<void>;
  /** Ends the session; returns the upstream sessions it had opened (to close them). */
  end(sid: string): Promise<Record<string, UpstreamSession> | null>;
  close(): Promise<void>;
}

/** An idle session is forgotten after this long. */
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

const OPEN = '_open';
const PROVIDER_PREFIX = 'p:';

function upstreamsOf(fields: Record<string, string>): Record<string, UpstreamSession> {
  const out: Record<string, UpstreamSession> = {};
  for (const [field, value] of Object.entries(fields)) {
    if (!field.startsWith(PROVIDER_PREFIX)) continue;
    try {
      out[field.slice(PROVIDER_PREFIX.length)] = JSON.parse(value) as UpstreamSession;
    } catch {
      // A corrupt entry is as good as none: the next call opens a fresh upstream session.
    }
  }
  return out;
}

/** The single-process store. */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, { fields: Record<string, string>; expiresAt: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = SESSION_TTL_MS,
  ) {}

  private live(sid: string) {
    const entry = this.sessions.get(sid);
    if (!entry) return null;
    if (entry.expiresAt <= this.clock.now().getTime()) {
      this.sessions.delete(sid);
      return null;
    }
    return entry;
  }

  async create(sid: string) {
    this.sweep();
    this.sessions.set(sid, { fields: { [OPEN]: '1' }, expiresAt: this.clock.now().getTime() + this.ttlMs });
  }

  async get(sid: string) {
    const entry = this.live(sid);
    return entry ? upstreamsOf(entry.fields) : null;
  }

  async setUpstream(sid: string, providerId: string, session: UpstreamSession) {
    const entry = this.live(sid);
    if (!entry) return;
    entry.fields[PROVIDER_PREFIX + providerId] = JSON.stringify(session);
    entry.expiresAt = this.clock.now().getTime() + this.ttlMs;
  }

  async end(sid: string) {
    const entry = this.live(sid);
    this.sessions.delete(sid);
    return entry ? upstreamsOf(entry.fields) : null;
  }

  async close() {
    this.sessions.clear();
  }

  /** Drops expired sessions now and then, so abandoned ones do not pile up. */
  private sweep() {
    if (this.sessions.size < 10_000) return;
    const now = this.clock.now().getTime();
    for (const [sid, entry] of this.sessions) if (entry.expiresAt <= now) this.sessions.delete(sid);
  }
}

/** The shared store: one Redis hash per session (`agentgw:mcp-session:<sid>`), expiring when idle. */
export class RedisSessionStore implements SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs = SESSION_TTL_MS,
  ) {}

  private key = (sid: string) => `agentgw:mcp-session:${sid}`;

  async create(sid: string) {
    await this.redis.multi().hset(this.key(sid), OPEN, '1').pexpire(this.key(sid), this.ttlMs).exec();
  }

  async get(sid: string) {
    const fields = await this.redis.hgetall(this.key(sid));
    return fields[OPEN] === undefined ? null : upstreamsOf(fields);
  }

  async setUpstream(sid: string, providerId: string, session: UpstreamSession) {
    // Only while the session exists: an ended session must not come back to life.
    const key = this.key(sid);
    await this.redis.eval(
      "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then redis.call('HSET', KEYS[1], ARGV[2], ARGV[3]); redis.call('PEXPIRE', KEYS[1], ARGV[4]) end return 1",
      1,
      key,
      OPEN,
      PROVIDER_PREFIX + providerId,
      JSON.stringify(session),
      String(this.ttlMs),
    );
  }

  async end(sid: string) {
    const [[, fields]] = (await this.redis.multi().hgetall(this.key(sid)).del(this.key(sid)).exec()) as [[Error | null, Record<string, string>]];
    return fields[OPEN] === undefined ? null : upstreamsOf(fields);
  }

  async close() {
    await this.redis.quit().catch(() => undefined);
  }
}
