import type { Clock, RedisConnection } from '@agentgw/core';
import type { JsonRpcErrorObject } from '@agentgw/mcp-client';
import { RedisScript } from '../session-store.js';
import { heldValue, MAX_RELAYED_IN_PROCESS, putScript } from './relay-store.js';

/** A call of a 2026-07-28 client whose legacy upstream asked it something: who may continue it, and with which method. */
export interface BridgedCall {
  /** The client it belongs to (see `clientOwner`): only its retry continues it. */
  owner: string;
  method: string;
}

/**
 * What a bridged call came to since the client last looked: another question of the upstream
 * (relayed under the gateway id `id`), or the call's end (its result, or its JSON-RPC error and
 * the HTTP status that goes with it).
 */
export type BridgeEvent =
  | { kind: 'asked'; id: string; method: string; params?: Record<string, unknown> }
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'error'; error: JsonRpcErrorObject; status: number };

/**
 * Bridged calls and their events, by gateway id. Redis in distributed mode, so the client's
 * retry is answered on whichever replica it reaches while the upstream call runs on another; a
 * Map in the all-in-one. Bounded per owner and expiring.
 */
export interface BridgeStore {
  /** Keeps `call` under `id` for `ttlMs`; false (nothing kept) when its owner has `maxPerOwner` open already. */
  open(id: string, call: BridgedCall, ttlMs: number, maxPerOwner: number): Promise<boolean>;
  /** The open call `id` of `owner`; null when unknown, closed, expired or another owner's. */
  callOf(owner: string, id: string): Promise<BridgedCall | null>;
  /** Appends an event of call `id`, kept for `ttlMs` (from this append). */
  push(id: string, event: BridgeEvent, ttlMs: number): Promise<void>;
  /** Removes and returns the events of call `id`, oldest first (none: an empty list). */
  drain(id: string): Promise<BridgeEvent[]>;
  /** Forgets call `id` of `owner` (it ended, and the client has its answer). */
  close(owner: string, id: string): Promise<void>;
}

/** The single-process store: id → call, its owner, deadline and events. */
export class MemoryBridgeStore implements BridgeStore {
  private readonly calls = new Map<string, { call: BridgedCall; expiresAt: number; events: BridgeEvent[] }>();

  constructor(private readonly clock: Clock) {}

  async open(id: string, call: BridgedCall, ttlMs: number, maxPerOwner: number): Promise<boolean> {
    const now = this.clock.now().getTime();
    let owned = 0;
    for (const [other, held] of this.calls) {
      if (held.expiresAt <= now) this.calls.delete(other);
      else if (held.call.owner === call.owner) owned++;
    }
    if (owned >= maxPerOwner || this.calls.size >= MAX_RELAYED_IN_PROCESS) return false;
    this.calls.set(id, { call, expiresAt: now + ttlMs, events: [] });
    return true;
  }

  async callOf(owner: string, id: string): Promise<BridgedCall | null> {
    const held = this.calls.get(id);
    if (!held || held.call.owner !== owner || held.expiresAt <= this.clock.now().getTime()) return null;
    return held.call;
  }

  async push(id: string, event: BridgeEvent, ttlMs: number): Promise<void> {
    const held = this.calls.get(id);
    if (!held) return;
    held.events.push(event);
    held.expiresAt = Math.max(held.expiresAt, this.clock.now().getTime() + ttlMs);
  }

  async drain(id: string): Promise<BridgeEvent[]> {
    const held = this.calls.get(id);
    return held ? held.events.splice(0) : [];
  }

  async close(owner: string, id: string): Promise<void> {
    if (this.calls.get(id)?.call.owner === owner) this.calls.delete(id);
  }
}

// push: KEYS events list; ARGV event JSON, ttl.
const PUSH_SCRIPT = `
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
const pushScript = new RedisScript(PUSH_SCRIPT);
// drain: KEYS events list.
const DRAIN_SCRIPT = `
local events = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return events`;
const drainScript = new RedisScript(DRAIN_SCRIPT);

const CALL_PREFIX = 'agentgw:mcp-bridge:';
const EVENTS_PREFIX = 'agentgw:mcp-bridge-events:';

/** The shared store: one Redis hash per owner (`agentgw:mcp-bridge:<owner>`, id → `<expiresAt>|<call JSON>`), a call's events in the list `agentgw:mcp-bridge-events:<id>`. */
export class RedisBridgeStore implements BridgeStore {
  constructor(
    private readonly redis: RedisConnection,
    private readonly clock: Clock,
  ) {}

  async open(id: string, call: BridgedCall, ttlMs: number, maxPerOwner: number): Promise<boolean> {
    const now = String(this.clock.now().getTime());
    const kept = await putScript.run(
      this.redis,
      [CALL_PREFIX + call.owner],
      [id, JSON.stringify(call), now, String(ttlMs), String(maxPerOwner)],
    );
    return kept === 1;
  }

  async callOf(owner: string, id: string): Promise<BridgedCall | null> {
    const call = heldValue<BridgedCall>(await this.redis.hget(CALL_PREFIX + owner, id), this.clock.now().getTime());
    return call?.owner === owner ? call : null;
  }

  async push(id: string, event: BridgeEvent, ttlMs: number): Promise<void> {
    await pushScript.run(this.redis, [EVENTS_PREFIX + id], [JSON.stringify(event), String(ttlMs)]);
  }

  async drain(id: string): Promise<BridgeEvent[]> {
    const events = (await drainScript.run(this.redis, [EVENTS_PREFIX + id], [])) as string[] | null;
    return (events ?? []).flatMap((event) => {
      try {
        return [JSON.parse(event) as BridgeEvent];
      } catch {
        return [];
      }
    });
  }

  async close(owner: string, id: string): Promise<void> {
    await this.redis.hdel(CALL_PREFIX + owner, id);
  }
}
