import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { ConfigError } from '../config.js';

/** A seed node of a Redis Cluster. */
export interface ClusterSeed {
  host: string;
  port: number;
}

/**
 * Where Redis is: one server by URL, or a cluster by its seed nodes (auth and TLS from the same
 * URL as for one server; its host is a seed too). Every Redis user of the gateway takes one.
 */
export type RedisTarget = { url: string } | { cluster: { url: string; seeds: readonly ClusterSeed[] } };

/** A connection to either kind: both speak the same commands; a cluster routes each to its slot's node. */
export type RedisConnection = Redis | Cluster;

/** The target REDIS_URL and REDIS_CLUSTER_NODES describe; undefined without REDIS_URL (in-process adapters). */
export function redisTargetFrom(config: {
  REDIS_URL?: string | undefined;
  REDIS_CLUSTER_NODES: readonly string[];
}): RedisTarget | undefined {
  if (!config.REDIS_URL) {
    if (config.REDIS_CLUSTER_NODES.length > 0)
      throw new ConfigError([
        { variable: 'REDIS_URL', message: 'is required with REDIS_CLUSTER_NODES (it carries auth and TLS)' },
      ]);
    return undefined;
  }
  if (config.REDIS_CLUSTER_NODES.length === 0) return { url: config.REDIS_URL };
  const seeds = config.REDIS_CLUSTER_NODES.map((node) => {
    const at = node.lastIndexOf(':');
    return { host: node.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(node.slice(at + 1)) };
  });
  return { cluster: { url: config.REDIS_URL, seeds } };
}

/** Whether a target is a cluster: key layouts and pub/sub differ (hash tags, sharded channels). */
export const isCluster = (target: RedisTarget): target is Extract<RedisTarget, { cluster: unknown }> =>
  'cluster' in target;

/** The per-node options a cluster URL carries: credentials, TLS (rediss:), database 0 only. */
function nodeOptionsOf(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** Extra cluster behaviour one user needs (sharded subscribers for the event bus). */
export type ClusterExtras = Pick<ClusterOptions, 'shardedSubscribers'>;

/**
 * Opens a connection to `target` with `options` (per node on a cluster). `lazyConnect` applies to
 * the cluster as a whole; a stopped primary's slots are followed to its promoted replica.
 */
export function connectRedis(
  target: RedisTarget,
  options: RedisOptions = {},
  extras: ClusterExtras = {},
): RedisConnection {
  if (!isCluster(target)) return new Redis(target.url, options);
  const { lazyConnect, ...perNode } = options;
  return new Cluster([...target.cluster.seeds], {
    lazyConnect,
    redisOptions: { ...nodeOptionsOf(target.cluster.url), ...perNode },
    // A failover takes about cluster-node-timeout plus an election: keep retrying through it.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    ...extras,
  });
}
