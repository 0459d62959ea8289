import type { Cluster } from 'ioredis';
import { RedisEventBus } from '../bus/index.js';
import { BullJobQueue } from '../queue/index.js';
import { connectRedis, redisTargetFrom } from './redis-target.js';

/**
 * Run as a child process by redis-cluster-secured.test.ts (so NODE_EXTRA_CA_CERTS, read at start,
 * can name the test CA): the three kinds of Redis user, built from REDIS_URL and
 * REDIS_CLUSTER_NODES exactly as a service builds them, each do one round trip on the cluster.
 * Prints one JSON line: how many primaries hold a key written here, what the bus heard, how many
 * jobs a worker ran (BullMQ's own duplicated connections).
 */
const target = redisTargetFrom({
  REDIS_URL: process.env.REDIS_URL,
  REDIS_CLUSTER_NODES: (process.env.REDIS_CLUSTER_NODES ?? '').split(','),
})!;
const prefix = `probe-${process.pid}`;
const commands = connectRedis(target) as Cluster;
const bus = new RedisEventBus({ ...target, prefix });
const queue = new BullJobQueue({ ...target, prefix });
try {
  for (let i = 0; i < 16; i++) await commands.set(`${prefix}:{${i}}`, 'x', 'EX', 60);
  const sizes = await Promise.all(commands.nodes('master').map((node) => node.dbsize()));
  let hear: (userId: string) => void = () => {};
  const heard = new Promise<string>((resolve) => (hear = resolve));
  await bus.subscribe('user.changed', (payload) => hear(payload.userId));
  await bus.publish('user.changed', { userId: 'u1' });
  let ran = 0;
  let done: () => void = () => {};
  const consumed = new Promise<void>((resolve) => (done = resolve));
  await queue.consume('push', async (jobs) => {
    ran += jobs.length;
    done();
  });
  await queue.enqueue('push', { userId: 'u', title: 't', body: 'b', data: {} });
  const [userId] = await Promise.all([heard, consumed]);
  const found = { primariesWithKeys: sizes.filter((n) => n > 0).length, heard: userId, jobsRun: ran };
  process.stdout.write(`${JSON.stringify(found)}\n`);
} finally {
  await Promise.all([bus.close(), queue.close(), commands.quit()]);
}
