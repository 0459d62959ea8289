import type { Clock, EventBus, RedisConnection } from '@agentgw/core';
import { BusWakeups, Wakeups, type Watch } from '../bus-wakeups.js';
import { RedisScript } from '../session-store.js';

/** What a paused answer stream keeps: events past the bounds are dropped (see `append`). */
export interface ResumptionBounds {
  /** Events one stream keeps (its final response always has a slot beyond them). */
  maxEvents: number;
  /** Bytes of events one stream keeps (its final response is bounded on its own, `MAX_FINAL_EVENT_BYTES`). */
  maxBytes: number;
  /** How long a stream is kept after its last write. */
  ttlMs: number;
}

/** The defaults: a paused call's notifications are few; its answer is bounded separately. */
export const RESUMPTION_BOUNDS: ResumptionBounds = { maxEvents: 256, maxBytes: 1024 * 1024, ttlMs: 5 * 60_000 };
/** The largest final response kept for a resume; a larger one is replaced by a JSON-RPC error saying so. */
export const MAX_FINAL_EVENT_BYTES = 4 * 1024 * 1024;
/** Paused streams one process keeps in all (the in-process store); past it a stream is not paused but answered on its open connection. */
export const MAX_STREAMS_IN_PROCESS = 2_000;

/** What a resume reads: the events after the one it had (as data JSON, by index), and whether the final response is among those kept. */
export interface ResumptionRead {
  events: { index: number; data: string }[];
  done: boolean;
}

/**
 * The events of paused answer streams (SEP-1699), by unguessable stream token, each bound to the
 * session that opened it. Redis in distributed mode (a resume reaches any replica), a Map in the
 * all-in-one. Bounded per stream (events, bytes) and in time.
 */
export interface ResumptionStore {
  /** Starts a stream for session `owner`; false when none can be kept now (the caller then answers on the open connection). */
  open(token: string, owner: string): Promise<boolean>;
  /** Appends one event (`final`: the response, which ends the stream); a notification past the bounds is dropped. */
  append(token: string, data: string, final: boolean): Promise<void>;
  /** The events after `after`; null when the stream is unknown, expired or another session's. */
  read(owner: string, token: string, after: number): Promise<ResumptionRead | null>;
  /** Watches `token` for appends (on any replica); taken before a read, so an append after that read wakes the watch's next wait. */
  watch(token: string): Promise<Watch>;
  /** Stops listening for other replicas' appends (shutdown). */
  stop(): Promise<void>;
}

interface KeptStream {
  owner: string;
  events: string[];
  bytes: number;
  done: boolean;
  expiresAt: number;
}

/** The single-process store. */
export class MemoryResumptionStore implements ResumptionStore {
  private readonly streams = new Map<string, KeptStream>();
  private readonly appended = new Wakeups();

  constructor(
    private readonly clock: Clock,
    private readonly bounds: ResumptionBounds = RESUMPTION_BOUNDS,
  ) {}

  async open(token: string, owner: string): Promise<boolean> {
    const now = this.clock.now().getTime();
    for (const [other, kept] of this.streams) if (kept.expiresAt <= now) this.streams.delete(other);
    if (this.streams.size >= MAX_STREAMS_IN_PROCESS) return false;
    this.streams.set(token, { owner, events: [], bytes: 0, done: false, expiresAt: now + this.bounds.ttlMs });
    return true;
  }

  async append(token: string, data: string, final: boolean): Promise<void> {
    const kept = this.streams.get(token);
    if (!kept || kept.done) return;
    if (!final && (kept.events.length >= this.bounds.maxEvents || kept.bytes + data.length > this.bounds.maxBytes))
      return;
    kept.events.push(data);
    kept.bytes += data.length;
    kept.done = final;
    kept.expiresAt = this.clock.now().getTime() + this.bounds.ttlMs;
    this.appended.wake(token);
  }

  async read(owner: string, token: string, after: number): Promise<ResumptionRead | null> {
    const kept = this.streams.get(token);
    if (!kept || kept.owner !== owner || kept.expiresAt <= this.clock.now().getTime()) return null;
    return {
      events: kept.events.slice(Math.max(after, 0)).map((data, i) => ({ index: Math.max(after, 0) + i + 1, data })),
      done: kept.done,
    };
  }

  async watch(token: string): Promise<Watch> {
    return this.appended.watch(token);
  }

  /** Nothing to stop: every append is made, and wakes its watches, in this process. */
  async stop(): Promise<void> {}
}

const RESUME_PREFIX = 'agentgw:mcp-resume:';

// append: KEYS stream hash; ARGV data, final, maxEvents, maxBytes, ttl. Fields: owner, n, bytes, done, e<i>.
const APPEND_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HGET', KEYS[1], 'done') == '1' then return 0 end
local n = tonumber(redis.call('HGET', KEYS[1], 'n'))
local bytes = tonumber(redis.call('HGET', KEYS[1], 'bytes'))
if ARGV[2] ~= '1' and (n >= tonumber(ARGV[3]) or bytes + string.len(ARGV[1]) > tonumber(ARGV[4])) then return 0 end
n = n + 1
redis.call('HSET', KEYS[1], 'e' .. n, ARGV[1], 'n', n, 'bytes', bytes + string.len(ARGV[1]), 'done', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;
const appendScript = new RedisScript(APPEND_SCRIPT);
// read: KEYS stream hash; ARGV owner, after. Returns {done, e<after+1>..e<n>}, or nil for another owner or none.
const READ_SCRIPT = `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return nil end
local n = tonumber(redis.call('HGET', KEYS[1], 'n'))
local out = { redis.call('HGET', KEYS[1], 'done') }
for i = tonumber(ARGV[2]) + 1, n do out[#out + 1] = redis.call('HGET', KEYS[1], 'e' .. i) end
return out`;
const readScript = new RedisScript(READ_SCRIPT);

/**
 * The shared store: one Redis hash per stream (`agentgw:mcp-resume:<token>`), expiring `ttlMs`
 * after its last write. Each append is announced on the bus (`mcp_stream.appended`), which wakes
 * the watches of every replica.
 */
export class RedisResumptionStore implements ResumptionStore {
  private readonly appended: BusWakeups<'mcp_stream.appended'>;

  constructor(
    private readonly redis: RedisConnection,
    private readonly bus: Pick<EventBus, 'publish' | 'subscribe'>,
    private readonly bounds: ResumptionBounds = RESUMPTION_BOUNDS,
  ) {
    this.appended = new BusWakeups(bus, 'mcp_stream.appended', ({ token }) => token);
  }

  async open(token: string, owner: string): Promise<boolean> {
    const key = RESUME_PREFIX + token;
    await this.redis
      .multi()
      .hset(key, 'owner', owner, 'n', '0', 'bytes', '0', 'done', '0')
      .pexpire(key, this.bounds.ttlMs)
      .exec();
    return true;
  }

  async append(token: string, data: string, final: boolean): Promise<void> {
    const { maxEvents, maxBytes, ttlMs } = this.bounds;
    const kept = await appendScript.run(
      this.redis,
      [RESUME_PREFIX + token],
      [data, final ? '1' : '0', String(maxEvents), String(maxBytes), String(ttlMs)],
    );
    // A lost message only delays a waiting resume to its fallback read.
    if (kept === 1) await this.bus.publish('mcp_stream.appended', { token }).catch(() => undefined);
  }

  async read(owner: string, token: string, after: number): Promise<ResumptionRead | null> {
    const start = Math.max(after, 0);
    const out = (await readScript.run(this.redis, [RESUME_PREFIX + token], [owner, String(start)])) as string[] | null;
    if (!Array.isArray(out) || out.length === 0) return null;
    const [done, ...events] = out;
    return { events: events.map((data, i) => ({ index: start + i + 1, data })), done: done === '1' };
  }

  watch(token: string): Promise<Watch> {
    return this.appended.watch(token);
  }

  stop(): Promise<void> {
    return this.appended.stop();
  }
}
