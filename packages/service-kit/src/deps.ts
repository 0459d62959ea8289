import type { AuthService } from '@agentgw/auth';
import type { Catalog } from '@agentgw/catalog';
import type { Clock, Config, EventBus, JobQueue, Logger, RateLimiter, RedisConnection } from '@agentgw/core';
import type { Database, DbHandle } from '@agentgw/db';
import type { Kysely } from 'kysely';
import type { ServiceMetrics } from './metrics.js';

/**
 * What every service's `createApp(deps)` receives. The all-in-one builds it once with the
 * embedded database and in-process adapters; each service's main.ts builds it with PostgreSQL,
 * Redis pub/sub, BullMQ and Redis rate-limit counters. Services may take extra deps of their own
 * beside these.
 */
export interface ServiceDeps {
  config: Config;
  db: Kysely<Database>;
  dbHandle: DbHandle;
  bus: EventBus;
  queue: JobQueue;
  /** Shared by every replica when it runs on Redis, so limits hold across them. */
  rateLimiter: RateLimiter;
  clock: Clock;
  logger: Logger;
  auth: AuthService;
  /**
   * The catalog's hot-path reader (agents, providers, rules), started: one per process, shared
   * by auth (its agents) and every service, so each fact has one cache.
   */
  catalog: Catalog;
  /** Set when the bus and queue run on Redis; /health reports Redis as `in-process` otherwise. */
  pingRedis?: () => Promise<boolean>;
  /**
   * The process's command connection to Redis (a cluster one on REDIS_CLUSTER_NODES), set when the
   * bus runs on Redis: services keep their shared state on it instead of opening their own. The
   * shell closes it, after the services.
   */
  redis?: RedisConnection;
  /** The process's Prometheus registry; services add gauges to it (`metrics.gauge`). The host makes one when absent. */
  metrics?: ServiceMetrics;
}
