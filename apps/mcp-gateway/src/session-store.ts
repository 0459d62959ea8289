import { createHash } from 'node:crypto';
import type { UpstreamSession } from '@agentgw/mcp-client';
import type { RedisConnection } from '@agentgw/core';

/** A session dropped to make room for a new one: its upstream sessions are to be closed. */
export interface EvictedSession {
  sid: string;
  /** Whose it was (the owner it was created with): only that caller may end its per-user upstream sessions. */
  owner: string;
  upstreams: Record<string, UpstreamSession>;
}

/**
 * Where a gateway session's mutable part lives: that it is still open, and the upstream
 * sessions it opened (one per provider). Redis in distributed mode, so any replica continues
 * any session; a Map in the all-in-one. Sessions are bounded per owner (the principal that
 * opened them, least recently used out) and expire when idle; a use refreshes them.
 */
export interface SessionStore {
  /** Records a new open session of `owner`; returns the sessions evicted to make room (close their upstreams). */
  create(sid: string, owner: string): Promise<EvictedSession[]>;
  /** The session's upstream sessions by provider id (refreshing its lifetime), or null when it is unknown, ended, evicted or expired. */
  get(sid: string): Promise<Record<string, UpstreamSession> | null>;
  /** Remembers the upstream session opened for a provider (refreshes the session's lifetime). */
  setUpstream(sid: string, providerId: string, session: UpstreamSession): Promise<void>;
  /** Ends the session; returns the upstream sessions it had opened (to close them). */
  end(sid: string): Promise<Record<string, UpstreamSession> | null>;
  close(): Promise<void>;
}

/** How long sessions live and how many are kept. */
export interface SessionLimits {
  /** An unused session is forgotten after this long (every use starts it again). */
  idleTtlMs: number;
  /** Open sessions one owner may hold; opening one more evicts its least recently used. */
  maxPerOwner: number;
  /** Open sessions the in-process store holds in all (oldest opened evicted first); Redis relies on the idle TTL. */
  maxSessions: number;
}

/** Defaults: 2 h idle, 32 per owner, 100,000 in one process. */
export const SESSION_LIMITS: Readonly<SessionLimits> = Object.freeze({
  idleTtlMs: 2 * 60 * 60 * 1000,
  maxPerOwner: 32,
  maxSessions: 100_000,
});

/** The session field that marks it open (a session hash without it is gone). */
export const OPEN_FIELD = '_open';
/** The session field naming its owner. */
export const OWNER_FIELD = '_owner';
/** The prefix of a session field holding one provider's upstream session. */
const PROVIDER_PREFIX = 'p:';

/** The field of a session that holds a provider's upstream session. */
export const upstreamField = (providerId: string): string => PROVIDER_PREFIX + providerId;

/** The upstream sessions held in a session's fields, by provider id (a corrupt one is left out). */
export function upstreamsOf(fields: Record<string, string>): Record<string, UpstreamSession> {
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

/** A Lua script run by its SHA (EVALSHA), sent whole only when Redis does not know it yet (the relay store runs its own too). */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(redis: RedisConnection, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}
