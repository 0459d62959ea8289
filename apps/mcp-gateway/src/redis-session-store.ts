import type { UpstreamSession } from '@agentgw/mcp-client';
import { systemClock, type Clock, type RedisConnection } from '@agentgw/core';
import {
  OPEN_FIELD,
  OWNER_FIELD,
  RedisScript,
  SESSION_LIMITS,
  upstreamField,
  upstreamsOf,
  type EvictedSession,
  type SessionLimits,
  type SessionStore,
} from './session-store.js';

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
local owner = redis.call('HGET', KEYS[1], '${OWNER_FIELD}')
if not owner then return false end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return owner`;

/** Every script the session store runs (each touches only KEYS[1]); exported for the test that checks it. */
export const SESSION_SCRIPTS: readonly string[] = [INDEX_SCRIPT, GET_SCRIPT, END_SCRIPT, SET_UPSTREAM_SCRIPT];

const indexScript = new RedisScript(INDEX_SCRIPT);
const getScript = new RedisScript(GET_SCRIPT);
const endScript = new RedisScript(END_SCRIPT);
const setUpstreamScript = new RedisScript(SET_UPSTREAM_SCRIPT);

const SESSION_PREFIX = 'agentgw:mcp-session:';
const OWNER_PREFIX = 'agentgw:mcp-sessions-of:';

/** Redis answers a hash as a flat [field, value, …] list inside scripts. */
function hashOf(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const [field, value] = [flat[i], flat[i + 1]];
    if (field !== undefined && value !== undefined) out[field] = value;
  }
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
      .hset(SESSION_PREFIX + sid, OPEN_FIELD, '1', OWNER_FIELD, owner)
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
      if (fields[OPEN_FIELD] !== undefined) evicted.push({ sid: victim, owner, upstreams: upstreamsOf(fields) });
    }
    return evicted;
  }

  async get(sid: string) {
    const fields = hashOf(
      (await getScript.run(this.redis, [SESSION_PREFIX + sid], [String(this.limits.idleTtlMs)])) as string[],
    );
    if (fields[OPEN_FIELD] === undefined) return null;
    await this.touchIndex(sid, fields[OWNER_FIELD]);
    return upstreamsOf(fields);
  }

  async setUpstream(sid: string, providerId: string, session: UpstreamSession) {
    // Only while the session exists: an ended session must not come back to life.
    const args = [upstreamField(providerId), JSON.stringify(session), String(this.limits.idleTtlMs)];
    const owner = (await setUpstreamScript.run(this.redis, [SESSION_PREFIX + sid], args)) as string | null;
    if (owner !== null) await this.touchIndex(sid, owner);
  }

  async end(sid: string) {
    const fields = hashOf((await endScript.run(this.redis, [SESSION_PREFIX + sid], [])) as string[]);
    if (fields[OWNER_FIELD] !== undefined) await this.redis.zrem(OWNER_PREFIX + fields[OWNER_FIELD], sid);
    return fields[OPEN_FIELD] === undefined ? null : upstreamsOf(fields);
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
