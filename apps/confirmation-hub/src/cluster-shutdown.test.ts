import { fileURLToPath } from 'node:url';
import {
  freePort,
  localClusterUnavailable,
  startLocalRedisCluster,
  startProcess,
  waitForHealthy,
  type LocalRedisCluster,
  type ManagedProcess,
} from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, TEST_SECRETS, type ScratchDatabase } from './replica-processes.js';

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const missing = !pgUrl || !redisUrl ? 'TEST_DATABASE_URL / TEST_REDIS_URL unset' : localClusterUnavailable();
if (missing) console.warn(`confirmation-hub shutdown on a Redis Cluster skipped: ${missing}`);

/** A hang, not a speed: a process still running this long after SIGTERM is stuck (its bound here is 2 s + 1 s). */
const STUCK_MS = 30_000;

/** The hub's own main.ts under node with tsx's loader (so the signal reaches the service), healthy on a free port. */
async function startHub(env: Record<string, string>): Promise<ManagedProcess> {
  const port = await freePort();
  const hub = startProcess({
    name: `confirmation-hub:${port}`,
    command: process.execPath,
    args: ['--import', 'tsx', fileURLToPath(new URL('./main.ts', import.meta.url))],
    cwd: fileURLToPath(new URL('../../../', import.meta.url)),
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      ...TEST_SECRETS,
      ...env,
      PORT: String(port),
    },
  });
  await waitForHealthy(`http://127.0.0.1:${port}/health`, hub, 120_000);
  return hub;
}

/** Sends SIGTERM itself (no SIGKILL fallback), then how the process ended: its exit code, or 'stuck'. */
async function terminate(hub: ManagedProcess): Promise<number | string | null> {
  process.kill(hub.pid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((resolve) => (timer = setTimeout(() => resolve('stuck'), STUCK_MS)));
  const outcome = await Promise.race([hub.exited, stuck]);
  clearTimeout(timer);
  return outcome;
}

/**
 * confirmation-hub replicas (their own main.ts) on a private six-node Redis Cluster: SIGTERM ends
 * them within the shutdown bound, after a primary's failover and while the cluster cannot answer.
 */
describe.skipIf(missing)('confirmation-hub on a Redis Cluster exits on SIGTERM', () => {
  let cluster: LocalRedisCluster;
  let database: ScratchDatabase;
  const hubs: ManagedProcess[] = [];

  beforeAll(async () => {
    [cluster, database] = await Promise.all([startLocalRedisCluster(), createScratchDatabase(pgUrl!)]);
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: cluster.url,
      REDIS_CLUSTER_NODES: cluster.nodesSetting,
      SHUTDOWN_TIMEOUT_MS: '2000',
    };
    hubs.push(await startHub(env));
    hubs.push(await startHub(env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(hubs.map((hub) => hub.stop('SIGKILL')));
    await cluster?.stop();
    await database?.drop();
  });

  it('after the failover of the primary holding its queues and channels, exits 0', async () => {
    const primary = await cluster.primaryOf('bull:{agentgw-confirmation-timeout}:agentgw-confirmation-timeout:id');
    await cluster.failOver(primary);
    const hub = hubs[0]!;
    expect(await terminate(hub), hub.output().slice(-3_000)).toBe(0);
    expect(hub.output()).toContain('"msg":"stopped"');
  }, 90_000);

  it('with every cluster node gone (nothing can answer an UNSUBSCRIBE or a QUIT), exits 0 and names what it left', async () => {
    for (const node of cluster.nodes) {
      try {
        process.kill(node.pid, 'SIGKILL');
      } catch {
        // the primary the previous test failed over is gone already
      }
    }
    const hub = hubs[1]!;
    expect(await terminate(hub), hub.output().slice(-3_000)).toBe(0);
    expect(hub.output()).toContain('"msg":"stopped"');
    expect(hub.output()).toContain('a dependency did not close in time; left');
  }, 90_000);
});
