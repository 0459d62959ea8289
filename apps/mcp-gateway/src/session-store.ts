import { createHash } from 'node:crypto';
import type { UpstreamSession } from '@agentgw/mcp-client';
import { systemClock, type Clock, type RedisConnection } from '@agentgw/core';

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

const OPEN = '_open';
const OWNER = '_owner';
const PROVIDER_PREFIX = 'p:';
/** At most one full sweep of expired sessions per this long (a full in-process store does not scan on every create). */
const SWEEP_INTERVAL_MS = 60_000;

function upstreamsOf(fields: Record<string, string>): Record<string, UpstreamSession> {
  const out: Record<string, UpstreamSession> = {};
  for (const field in fields) {
    if (!field.startsWith(PROVIDER_PREFIX)) continue;
    try {
      out[field.slice(PROVIDER_PREFIX.length)] = JSON.parse(fields[field]!) as UpstreamSession;
    } catch {
      // A corrupt entry is as good as none: the next call opens a fresh upstream session.
    }
  }
  return out;
}

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
      let oldest: [string, MemoryEntry] | null = null;
      for (const other of owned) {
        const entry = this.sessions.get(other)!;
        if (oldest === null || entry.expiresAt < oldest[1].expiresAt) oldest = [other, entry];
      }
      evicted.push(this.drop(...oldest!));
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
    this.sessions.set(sid, { fields: { [OPEN]: '1' }, owner, expiresAt: now + this.limits.idleTtlMs });
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
    entry.fields[PROVIDER_PREFIX + providerId] = JSON.stringify(session);
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

  /** Drops expired sessions (only when the store is full, at most once per SWEEP_INTERVAL_MS). */
  private sweep(now: number) {
    this.sweptAt = now;
    for (const [sid, entry] of this.sessions) if (entry.expiresAt <= now) this.drop(sid, entry);
  }
}

// Each script touches one key, the one it is given in KEYS[1], so the store works on Redis
// Cluster (a script may only touch declared keys of one slot). A session's hash and its owner's
// index are kept in step by two calls; the index only serves the cap, so a crash between them
// leaves at most a stale sid in it, which the next eviction passes over (its hash is gone).
// index: KEYS owner index; ARGV sid, now, ttl, maxPerOwner. Adds the sid, drops expired entries and
// removes (and returns) the least recently used sids past the cap.
const INDEX_SCRIPT = `
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[2]) - tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if over <= 0 then return {} end
local victims = redis.call('ZRANGE', KEYS[1], 0, over - 1)
redis.call('ZREM', KEYS[1], unpack(victims))
return victims`;
// get: KEYS session; ARGV ttl. Refreshes the session; returns its fields.
const GET_SCRIPT = `
local fields = redis.call('HGETALL', KEYS[1])
if #fields > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return fields`;
// end: KEYS session. Deletes it; returns its fields.
const END_SCRIPT = `
local fields = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
return fields`;
// setUpstream: KEYS session; ARGV field, value, ttl. Only while the session exists; returns its owner (false when gone).
const SET_UPSTREAM_SCRIPT = `
local owner = redis.call('HGET', KEYS[1], '${OWNER}')
if not owner then return false end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return owner`;

/** Every script the session store runs (each touches only KEYS[1]); exported for the test that checks it. */
export const SESSION_SCRIPTS: readonly string[] = [INDEX_SCRIPT, GET_SCRIPT, END_SCRIPT, SET_UPSTREAM_SCRIPT];

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

const indexScript = new RedisScript(INDEX_SCRIPT);
const getScript = new RedisScript(GET_SCRIPT);
const endScript = new RedisScript(END_SCRIPT);
const setUpstreamScript = new RedisScript(SET_UPSTREAM_SCRIPT);

const SESSION_PREFIX = 'agentgw:mcp-session:';
const OWNER_PREFIX = 'agentgw:mcp-sessions-of:';

/** Redis answers a hash as a flat [field, value, …] list inside scripts. */
function hashOf(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

/**
 * The shared store: one Redis hash per session (`agentgw:mcp-session:<sid>`, expiring when idle)
 * and one sorted set per owner (`agentgw:mcp-sessions-of:<owner>`, sids by last use) for the cap.
 * Every command and script names the one key it touches (Redis Cluster safe).
 */
export class RedisSessionStore implements SessionStore {
  private readonly limits: SessionLimits;

  constructor(
    /** The shell's connection (`ServiceDeps.redis`), shared with the relay and resumption stores; the shell closes it. */
    private readonly redis: RedisConnection,
    limits: Partial<SessionLimits> = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.limits = { ...SESSION_LIMITS, ...limits };
  }

  async create(sid: string, owner: string) {
    const now = String(this.clock.now().getTime());
    const ttl = String(this.limits.idleTtlMs);
    await this.redis
      .multi()
      .hset(SESSION_PREFIX + sid, OPEN, '1', OWNER, owner)
      .pexpire(SESSION_PREFIX + sid, ttl)
      .exec();
    const victims = (await indexScript.run(
      this.redis,
      [OWNER_PREFIX + owner],
      [sid, now, ttl, String(this.limits.maxPerOwner)],
    )) as string[];
    const evicted: EvictedSession[] = [];
    for (const victim of victims) {
      const fields = hashOf((await endScript.run(this.redis, [SESSION_PREFIX + victim], [])) as string[]);
      if (fields[OPEN] !== undefined) evicted.push({ sid: victim, owner, upstreams: upstreamsOf(fields) });
    }
    return evicted;
  }

  async get(sid: string) {
    const fields = hashOf(
      (await getScript.run(this.redis, [SESSION_PREFIX + sid], [String(this.limits.idleTtlMs)])) as string[],
    );
    if (fields[OPEN] === undefined) return null;
    await this.touchIndex(sid, fields[OWNER]);
    return upstreamsOf(fields);
  }

  async setUpstream(sid: string, providerId: string, session: UpstreamSession) {
    // Only while the session exists: an ended session must not come back to life.
    const args = [PROVIDER_PREFIX + providerId, JSON.stringify(session), String(this.limits.idleTtlMs)];
    const owner = (await setUpstreamScript.run(this.redis, [SESSION_PREFIX + sid], args)) as string | null;
    if (owner !== null) await this.touchIndex(sid, owner);
  }

  async end(sid: string) {
    const fields = hashOf((await endScript.run(this.redis, [SESSION_PREFIX + sid], [])) as string[]);
    if (fields[OWNER] !== undefined) await this.redis.zrem(OWNER_PREFIX + fields[OWNER], sid);
    return fields[OPEN] === undefined ? null : upstreamsOf(fields);
  }

  async close() {
    // Nothing of its own to release: the connection is the shell's.
  }

  /** Moves a used session to the recent end of its owner's index (only if still listed: an evicted one stays out). */
  private async touchIndex(sid: string, owner: string | undefined): Promise<void> {
    if (owner === undefined) return;
    const index = OWNER_PREFIX + owner;
    await this.redis
      .pipeline()
      .zadd(index, 'XX', this.clock.now().getTime(), sid)
      .pexpire(index, this.limits.idleTtlMs)
      .exec();
  }
}
