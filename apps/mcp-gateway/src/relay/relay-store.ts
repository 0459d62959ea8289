import type { Clock, RedisConnection } from '@agentgw/core';
import type { JsonRpcId, JsonRpcResponse, UpstreamSession } from '@agentgw/mcp-client';
import { RedisScript } from '../session-store.js';

/** Where a client's answer to a relayed request goes. */
export type RelayDestination =
  /** An upstream's own request: the answer is POSTed to it (provider, upstream session, the upstream's own id). */
  | { destination: 'upstream'; providerId: string; upstream: UpstreamSession; upstreamId: JsonRpcId }
  /** A request the gateway asked itself (an input_required result bridged for a legacy client): the answer is kept for the waiting call (`settle`). */
  | { destination: 'bridged' };

/**
 * A request sent to a client under a gateway-minted id: who may answer it, and where the answer goes.
 */
export type RelayedRequest = {
  /** The client it was sent to (see `clientOwner`): only that client's POST may answer it. */
  owner: string;
  method: string;
  /** The audit record of the relayed request itself (sampling, elicitation), or null (roots). */
  auditId: string | null;
} & RelayDestination;

/**
 * Pending relayed requests, by gateway id. Redis in distributed mode, so the client's answer is
 * routed from whichever replica it reaches; a Map in the all-in-one. Bounded per owner and
 * expiring: an answer after the timeout finds nothing.
 */
export interface RelayStore {
  /** Keeps `entry` under `id` for `ttlMs`; false (nothing kept) when its owner has `maxPerOwner` pending already. */
  put(id: string, entry: RelayedRequest, ttlMs: number, maxPerOwner: number): Promise<boolean>;
  /** Removes and returns the pending request `id` of `owner`; null when unknown, answered, expired or another owner's. */
  take(owner: string, id: string): Promise<RelayedRequest | null>;
  /** Keeps the client's answer to the bridged request `id` for `ttlMs`, for the replica whose call waits on it. */
  settle(id: string, response: JsonRpcResponse, ttlMs: number): Promise<void>;
  /** Removes and returns the answer kept for `id`; null while there is none. */
  answerOf(id: string): Promise<JsonRpcResponse | null>;
}

/** Pending relayed requests one process keeps in all (past it a relay is refused, as past the per-owner bound). */
export const MAX_RELAYED_IN_PROCESS = 10_000;

/** The single-process store: per owner, id → entry and its deadline. */
export class MemoryRelayStore implements RelayStore {
  private readonly owners = new Map<string, Map<string, { entry: RelayedRequest; expiresAt: number }>>();
  private readonly answers = new Map<string, { response: JsonRpcResponse; expiresAt: number }>();
  private size = 0;

  constructor(private readonly clock: Clock) {}

  async put(id: string, entry: RelayedRequest, ttlMs: number, maxPerOwner: number): Promise<boolean> {
    const now = this.clock.now().getTime();
    const pending = this.owners.get(entry.owner) ?? new Map<string, { entry: RelayedRequest; expiresAt: number }>();
    for (const [other, held] of pending) if (held.expiresAt <= now) this.remove(pending, entry.owner, other);
    if (pending.size >= maxPerOwner || this.size >= MAX_RELAYED_IN_PROCESS) return false;
    pending.set(id, { entry, expiresAt: now + ttlMs });
    this.owners.set(entry.owner, pending);
    this.size++;
    return true;
  }

  async take(owner: string, id: string): Promise<RelayedRequest | null> {
    const pending = this.owners.get(owner);
    const held = pending?.get(id);
    if (!pending || !held) return null;
    this.remove(pending, owner, id);
    return held.expiresAt > this.clock.now().getTime() ? held.entry : null;
  }

  async settle(id: string, response: JsonRpcResponse, ttlMs: number): Promise<void> {
    const now = this.clock.now().getTime();
    for (const [other, held] of this.answers) if (held.expiresAt <= now) this.answers.delete(other);
    // Each answer settles one pending request, so the pending bound bounds these too.
    if (this.answers.size < MAX_RELAYED_IN_PROCESS) this.answers.set(id, { response, expiresAt: now + ttlMs });
  }

  async answerOf(id: string): Promise<JsonRpcResponse | null> {
    const held = this.answers.get(id);
    if (!held) return null;
    this.answers.delete(id);
    return held.expiresAt > this.clock.now().getTime() ? held.response : null;
  }

  private remove(pending: Map<string, unknown>, owner: string, id: string): void {
    if (pending.delete(id)) this.size--;
    if (pending.size === 0) this.owners.delete(owner);
  }
}

// put: KEYS owner hash; ARGV id, entry JSON, now, ttl, max. Expired fields go first; the hash lives as long as its newest entry.
const PUT_SCRIPT = `
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local at = tonumber(string.match(fields[i + 1], '^(%d+)|'))
  if at == nil or at <= tonumber(ARGV[3]) then redis.call('HDEL', KEYS[1], fields[i]) end
end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[5]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], (tonumber(ARGV[3]) + tonumber(ARGV[4])) .. '|' .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;
/** Keeps a value in an owner's hash, expired ones dropped first, at most `max` per owner (the bridge store's too). */
export const putScript = new RedisScript(PUT_SCRIPT);
// take: KEYS owner hash; ARGV id.
const TAKE_SCRIPT = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if value then redis.call('HDEL', KEYS[1], ARGV[1]) end
return value`;
const takeScript = new RedisScript(TAKE_SCRIPT);

const RELAY_PREFIX = 'agentgw:mcp-relay:';
const ANSWER_PREFIX = 'agentgw:mcp-relay-answer:';

/** The shared store: one Redis hash per owner (`agentgw:mcp-relay:<owner>`), id → `<expiresAt>|<entry JSON>`; a bridged answer under `agentgw:mcp-relay-answer:<id>`. */
export class RedisRelayStore implements RelayStore {
  constructor(
    private readonly redis: RedisConnection,
    private readonly clock: Clock,
  ) {}

  async put(id: string, entry: RelayedRequest, ttlMs: number, maxPerOwner: number): Promise<boolean> {
    const now = String(this.clock.now().getTime());
    const kept = await putScript.run(
      this.redis,
      [RELAY_PREFIX + entry.owner],
      [id, JSON.stringify(entry), now, String(ttlMs), String(maxPerOwner)],
    );
    return kept === 1;
  }

  async take(owner: string, id: string): Promise<RelayedRequest | null> {
    const value = (await takeScript.run(this.redis, [RELAY_PREFIX + owner], [id])) as string | null;
    const entry = heldValue<RelayedRequest>(value, this.clock.now().getTime());
    return entry?.owner === owner ? entry : null;
  }

  async settle(id: string, response: JsonRpcResponse, ttlMs: number): Promise<void> {
    await this.redis.set(ANSWER_PREFIX + id, JSON.stringify(response), 'PX', ttlMs);
  }

  async answerOf(id: string): Promise<JsonRpcResponse | null> {
    const value = await this.redis.getdel(ANSWER_PREFIX + id);
    if (value === null) return null;
    try {
      return JSON.parse(value) as JsonRpcResponse;
    } catch {
      return null;
    }
  }
}

/** A `<expiresAt>|<JSON>` field of an owner's hash (see `putScript`) as its value; null when absent, expired or unreadable. */
export function heldValue<T>(value: string | null, now: number): T | null {
  if (value === null) return null;
  const bar = value.indexOf('|');
  if (Number(value.slice(0, bar)) <= now) return null;
  try {
    return JSON.parse(value.slice(bar + 1)) as T;
  } catch {
    return null;
  }
}
