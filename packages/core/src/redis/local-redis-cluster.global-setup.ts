import { localClusterUnavailable, startLocalRedisCluster } from './local-redis-cluster.js';

/**
 * vitest global setup: with the integration tests on (TEST_REDIS_URL), one local Redis Cluster for
 * the whole run, named to the test files by TEST_REDIS_CLUSTER_NODES / TEST_REDIS_CLUSTER_URL.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (!process.env.TEST_REDIS_URL) return undefined;
  const missing = localClusterUnavailable();
  if (missing) {
    console.warn(`Redis Cluster variants skipped: ${missing}`);
    return undefined;
  }
  const cluster = await startLocalRedisCluster();
  process.env.TEST_REDIS_CLUSTER_NODES = cluster.nodesSetting;
  process.env.TEST_REDIS_CLUSTER_URL = cluster.url;
  return () => cluster.stop();
}
