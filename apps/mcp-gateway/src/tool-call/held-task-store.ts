import { trimOldest, type Clock, type RedisConnection } from '@agentgw/core';
import type { Mode } from './client-carrier.js';

/** How a held-call task ended, once it has: the call's result, the JSON-RPC error it was refused or failed with, or withdrawn. */
export type HeldTaskOutcome =
  | { kind: 'completed'; result: Record<string, unknown> }
  | { kind: 'failed'; error: { code: number; message: string; data?: unknown } }
  | { kind: 'cancelled' };

/**
 * What a held-call task keeps beside its sealed id: the call's arguments and routing (the id names
 * the rest), how its person may be asked in the client (null: not at all), its times, and its end.
 */
export interface HeldTaskEntry {
  arguments: Record<string, unknown>;
  /** Where the call was routed: the unified endpoint's `?providers=` filter, or the proxy. */
  route: { kind: 'routed'; providerFilter: readonly string[] | null } | { kind: 'proxied' };
  alwaysConfirm: boolean;
  mode: Mode | null;
  createdAt: string;
  lastUpdatedAt: string;
  /** Epoch ms after which the task is gone (its confirmation's deadline; a finished task's, its TTL from the end). */
  expiresAt: number;
  outcome: HeldTaskOutcome | null;
}

/**
 * Held-call tasks by confirmation id: Redis in distributed mode, so any replica answers
 * `tasks/get` and the one that ran the call leaves its result for the others; a bounded Map in
 * the all-in-one. Every entry expires with its task.
 */
export interface HeldTaskStore {
  /** Keeps (or replaces) the entry of confirmation `id` until its `expiresAt`. */
  put(id: string, entry: HeldTaskEntry): Promise<void>;
  /** The live entry of confirmation `id`; null when unknown or expired. */
  get(id: string): Promise<HeldTaskEntry | null>;
}

/** Tasks kept in one process at most; the oldest go first (a purged task is answered as unknown, as the spec allows). */
const MAX_TASKS_IN_PROCESS = 10_000;

/** The single-process store. */
export class MemoryHeldTaskStore implements HeldTaskStore {
  private readonly entries = new Map<string, HeldTaskEntry>();

  constructor(private readonly clock: Clock) {}

  async put(id: string, entry: HeldTaskEntry): Promise<void> {
    this.entries.delete(id);
    this.entries.set(id, entry);
    trimOldest(this.entries, MAX_TASKS_IN_PROCESS);
  }

  async get(id: string): Promise<HeldTaskEntry | null> {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.expiresAt > this.clock.now().getTime()) return entry ?? null;
    this.entries.delete(id);
    return null;
  }
}

const KEY_PREFIX = 'agentgw:mcp-held-task:';

/** The shared store: one key per task (`agentgw:mcp-held-task:<confirmation id>`), expiring with it. */
export class RedisHeldTaskStore implements HeldTaskStore {
  constructor(
    private readonly redis: RedisConnection,
    private readonly clock: Clock,
  ) {}

  async put(id: string, entry: HeldTaskEntry): Promise<void> {
    const ttlMs = Math.max(1, entry.expiresAt - this.clock.now().getTime());
    await this.redis.set(KEY_PREFIX + id, JSON.stringify(entry), 'PX', ttlMs);
  }

  async get(id: string): Promise<HeldTaskEntry | null> {
    const raw = await this.redis.get(KEY_PREFIX + id);
    if (raw === null) return null;
    const entry = JSON.parse(raw) as HeldTaskEntry;
    return entry.expiresAt > this.clock.now().getTime() ? entry : null;
  }
}
