import { createAuth } from '@agentgw/auth';
import { createCatalog } from '@agentgw/catalog';
import {
  BullJobQueue,
  ConfigError,
  connectRedis,
  createLogger,
  isCluster,
  RedisEventBus,
  RedisRateLimiter,
  redisTargetFrom,
  settleWithin,
  systemClock,
  type Config,
  type EventBus,
  type JobQueue,
  type RateLimiter,
  type RedisConnection,
} from '@agentgw/core';
import { openDatabase, type DbHandle } from '@agentgw/db';
import type { ServiceDeps } from './deps.js';
import { inProcessAdapters } from './in-process-adapters.js';
import { createMetrics } from './metrics.js';
import { queueDepthReader } from './queue-depth.js';
import { tracedBus, tracedQueue } from './trace-carriers.js';
import { tracingActive } from './tracing.js';

export interface BuildDepsOptions {
  /** Names the logger and the /health body. */
  service: string;
  /** `distributed` insists on PostgreSQL and Redis; `embedded` allows a file database and in-process adapters. */
  mode: 'embedded' | 'distributed';
  /** Where the embedded database lives when DATABASE_URL is unset (`<dataDir>/pgdata`, default `.gateway-data`). */
  dataDir?: string;
}

/**
 * `close()` releases every dependency in reverse order of opening. With `deadlineMs` (a shutdown's
 * bound) a dependency still closing when it runs out is left behind, named in a warning: a shutdown
 * must end even when Redis cannot answer (on a cluster ioredis queues an UNSUBSCRIBE or QUIT for good).
 */
export type BuiltDeps = ServiceDeps & { close(options?: { deadlineMs?: number }): Promise<void> };

/** One dependency to release on close, named in the warning when it does not close in time. */
interface Closer {
  name: string;
  close(): Promise<unknown>;
}

/** Distributed services share one database and one Redis; a file database or in-process bus would split them silently. */
function assertDistributable(config: Config): void {
  const problems: { variable: string; message: string }[] = [];
  if (!config.DATABASE_URL || config.DATABASE_URL.startsWith('file:')) {
    problems.push({ variable: 'DATABASE_URL', message: 'must be a postgres:// URL when running services separately' });
  }
  if (!config.REDIS_URL) {
    problems.push({ variable: 'REDIS_URL', message: 'is required when running services separately' });
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * Opens everything a service needs: the database, the bus, queue and rate limiter (Redis/BullMQ
 * when REDIS_URL is set, on the cluster REDIS_CLUSTER_NODES names if set; in-process otherwise), the started catalog reader, auth reading its agents
 * through it, and a logger. `close()` releases them all.
 */
export async function buildDeps(config: Config, options: BuildDepsOptions): Promise<BuiltDeps> {
  if (options.mode === 'distributed') assertDistributable(config);
  const logger = createLogger({ level: config.LOG_LEVEL, name: options.service, format: config.LOG_FORMAT });
  const closers: Closer[] = [];
  const closeAll = async ({ deadlineMs }: { deadlineMs?: number } = {}): Promise<void> => {
    const endsAt = deadlineMs === undefined ? undefined : Date.now() + deadlineMs;
    for (const { name, close } of closers.splice(0).reverse()) {
      const closing = close();
      const outcome = await (endsAt === undefined ? closing : settleWithin(closing, endsAt - Date.now())).catch(
        (err: unknown) => logger.warn({ err, dependency: name }, 'error while closing a dependency'),
      );
      if (outcome === 'late') logger.warn({ dependency: name, deadlineMs }, 'a dependency did not close in time; left');
    }
  };

  try {
    const dbHandle: DbHandle = await openDatabase({
      url: config.DATABASE_URL,
      dataDir: options.dataDir,
      poolMax: config.DATABASE_POOL_MAX,
    });
    closers.push({ name: 'database', close: () => dbHandle.close() });

    let bus: EventBus;
    let queue: JobQueue;
    let rateLimiter: RateLimiter;
    let pingRedis: (() => Promise<boolean>) | undefined;
    let commands: RedisConnection | undefined;
    const metrics = createMetrics();
    const redis = redisTargetFrom(config);
    if (redis) {
      // A connection of its own for health probes, so a busy subscriber connection cannot mask an outage.
      const probe = connectRedis(redis, { maxRetriesPerRequest: 1, lazyConnect: true });
      probe.on('error', () => {}); // reported through /health, not as an unhandled error
      closers.push({ name: 'redis health probe', close: async () => probe.disconnect() });
      pingRedis = async () => (await probe.ping()) === 'PONG';
      metrics.gauge(
        'agentgw_queue_jobs',
        'Jobs in the queue by job name and state (read from Redis at scrape time)',
        queueDepthReader(probe, isCluster(redis)),
        ['queue', 'state'],
      );
      // Services' shared state (e.g. mcp-gateway's sessions): connected on first use, so a service that keeps none opens nothing.
      const connection = connectRedis(redis, { maxRetriesPerRequest: 2, lazyConnect: true });
      closers.push({ name: 'redis commands', close: async () => connection.disconnect() });
      commands = connection;
      bus = new RedisEventBus({ ...redis, logger });
      closers.push({ name: 'event bus', close: () => bus.close() });
      queue = new BullJobQueue({ ...redis, logger });
      closers.push({ name: 'job queue', close: () => queue.close() });
      rateLimiter = new RedisRateLimiter({ ...redis, logger });
      closers.push({ name: 'rate limiter', close: () => rateLimiter.close() });
    } else {
      ({ bus, queue, rateLimiter } = inProcessAdapters({ logger }));
      closers.push(
        { name: 'event bus', close: () => bus.close() },
        { name: 'job queue', close: () => queue.close() },
        { name: 'rate limiter', close: () => rateLimiter.close() },
      );
    }

    if (tracingActive()) {
      // Trace context rides in event payloads and job data; with tracing off nothing is wrapped.
      bus = tracedBus(bus);
      queue = tracedQueue(queue);
    }
    const catalog = createCatalog({ config, db: dbHandle.db, bus, clock: systemClock, logger });
    await catalog.start();
    closers.push({ name: 'catalog', close: () => catalog.stop() });
    const auth = await createAuth({ config, db: dbHandle.db, bus, agents: catalog.agents, clock: systemClock, logger });
    return {
      config,
      db: dbHandle.db,
      dbHandle,
      bus,
      queue,
      rateLimiter,
      clock: systemClock,
      logger,
      auth,
      catalog,
      pingRedis,
      redis: commands,
      metrics,
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
