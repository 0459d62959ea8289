import { ConfigError, type EventBus } from '@agentgw/core';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { buildDeps } from './build-deps.js';
import { healthRoute } from './health.js';
import { testConfig } from './testing.js';

describe('buildDeps', () => {
  it('refuses distributed mode without PostgreSQL and Redis, naming both variables', async () => {
    const attempt = buildDeps(testConfig({ DATABASE_URL: 'file:./somewhere' }), {
      service: 'vault',
      mode: 'distributed',
    });
    await expect(attempt).rejects.toBeInstanceOf(ConfigError);
    await expect(attempt).rejects.toThrow(/DATABASE_URL must be a postgres:\/\/ URL[\s\S]*REDIS_URL is required/);
  });

  it('embedded mode: the file database under dataDir, in-process bus and queue, released by close()', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'service-kit-'));
    try {
      const deps = await buildDeps(testConfig(), { service: 'gateway', mode: 'embedded', dataDir });
      expect(deps.dbHandle.kind).toBe('pglite');
      expect(existsSync(join(dataDir, 'pgdata'))).toBe(true);
      const res = await healthRoute('gateway', deps).request('/health');
      expect(await res.json()).toEqual({
        status: 'ok',
        service: 'gateway',
        checks: { database: 'ok', redis: 'in-process' },
      });
      await deps.close();
      // The lock is released: the same directory opens again.
      const again = await buildDeps(testConfig(), { service: 'gateway', mode: 'embedded', dataDir });
      expect(await again.dbHandle.ping()).toBe(true);
      await again.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  const pgUrl = process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.TEST_REDIS_URL;
  it.skipIf(!pgUrl || !redisUrl)(
    'distributed mode: PostgreSQL, Redis bus and BullMQ queue, Redis in /health',
    async () => {
      const deps = await buildDeps(testConfig({ DATABASE_URL: pgUrl!, REDIS_URL: redisUrl! }), {
        service: 'audit-writer',
        mode: 'distributed',
      });
      try {
        expect(deps.dbHandle.kind).toBe('postgres');
        const res = await healthRoute('audit-writer', deps).request('/health');
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({
          status: 'ok',
          service: 'audit-writer',
          checks: { database: 'ok', redis: 'ok' },
        });

        // Other suites share this Redis and its channels: wait for this test's own event only.
        const userId = `u-redis-${randomUUID()}`;
        const { event } = await eventSeen(deps.bus, userId);
        await deps.bus.publish('user.changed', { userId });
        expect(await event).toBe(userId);
      } finally {
        await deps.close();
      }
    },
  );

  it.skipIf(!pgUrl || !redisUrl)(
    "distributed mode: one command connection for services' own Redis state, connected on first use and released by close()",
    async () => {
      const deps = await buildDeps(testConfig({ DATABASE_URL: pgUrl!, REDIS_URL: redisUrl! }), {
        service: 'mcp-gateway',
        mode: 'distributed',
      });
      const redis = deps.redis;
      try {
        expect(redis?.status).toBe('wait');
        expect(await redis?.ping()).toBe('PONG');
      } finally {
        await deps.close();
      }
      await expect(redis?.ping()).rejects.toThrow(/closed/);
    },
  );

  it.skipIf(!pgUrl)(
    'DATABASE_POOL_MAX bounds the PostgreSQL connections one process opens (sized for a pooler)',
    async () => {
      const deps = await buildDeps(testConfig({ DATABASE_URL: pgUrl!, DATABASE_POOL_MAX: '2' }), {
        service: 'vault',
        mode: 'embedded',
      });
      try {
        const pids = await Promise.all(
          Array.from({ length: 12 }, async () => {
            const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.05)`.execute(
              deps.db,
            );
            return rows[0]!.pid;
          }),
        );
        expect(new Set(pids).size).toBe(2);
      } finally {
        await deps.close();
      }
    },
  );

  it('refuses a DATABASE_POOL_MAX outside 1..200, naming it', () => {
    for (const bad of ['0', '201', 'ten'])
      expect(() => testConfig({ DATABASE_POOL_MAX: bad })).toThrow(/DATABASE_POOL_MAX/);
  });

  const clusterNodes = process.env.TEST_REDIS_CLUSTER_NODES;
  const clusterUrl = process.env.TEST_REDIS_CLUSTER_URL;
  it.skipIf(!pgUrl || !clusterNodes || !clusterUrl)(
    'distributed mode on a Redis Cluster (REDIS_CLUSTER_NODES): bus, queue, rate limiter, /health and queue depths all work',
    async () => {
      const deps = await buildDeps(
        testConfig({ DATABASE_URL: pgUrl!, REDIS_URL: clusterUrl!, REDIS_CLUSTER_NODES: clusterNodes! }),
        { service: 'audit-writer', mode: 'distributed' },
      );
      try {
        const res = await healthRoute('audit-writer', deps).request('/health');
        expect(await res.json()).toMatchObject({ status: 'ok', checks: { database: 'ok', redis: 'ok' } });
        const userId = `u-cluster-${randomUUID()}`;
        const { event } = await eventSeen(deps.bus, userId);
        await deps.bus.publish('user.changed', { userId });
        expect(await event).toBe(userId);
        const delayed = `depth-${randomUUID()}`;
        await deps.queue.enqueue(
          'push',
          { userId, title: 't', body: 'b', data: {} },
          { jobId: delayed, delayMs: 60_000 },
        );
        const key = `cluster-${randomUUID()}`;
        expect((await deps.rateLimiter.hit(key, { limit: 1, windowMs: 10_000 })).allowed).toBe(true);
        expect((await deps.rateLimiter.hit(key, { limit: 1, windowMs: 10_000 })).allowed).toBe(false);
        const metrics = await deps.metrics!.registry.metrics();
        expect(metrics).toMatch(/agentgw_queue_jobs\{queue="push",state="delayed"\} [1-9]/);
        await deps.queue.cancel('push', delayed);
      } finally {
        await deps.close();
      }
    },
  );

  it.skipIf(!redisUrl)('reports Redis as down (503) once it stops answering', async () => {
    const proxy = await startTcpProxy(new URL(redisUrl!));
    const dataDir = mkdtempSync(join(tmpdir(), 'service-kit-'));
    const deps = await buildDeps(testConfig({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` }), {
      service: 'vault',
      mode: 'embedded',
      dataDir,
    });
    try {
      const app = healthRoute('vault', deps);
      expect(await (await app.request('/health')).json()).toMatchObject({ status: 'ok', checks: { redis: 'ok' } });
      await proxy.close();
      const res = await app.request('/health');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        status: 'degraded',
        service: 'vault',
        checks: { database: 'ok', redis: 'down' },
      });
    } finally {
      await deps.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * Subscribes (resolved once Redis has acknowledged it) and gives the promise of `userId`'s
 * `user.changed` event; events of other users, from suites sharing the Redis, are passed over.
 */
async function eventSeen(bus: EventBus, userId: string): Promise<{ event: Promise<string> }> {
  let seen!: (id: string) => void;
  const event = new Promise<string>((resolve) => (seen = resolve));
  await bus.subscribe('user.changed', (p) => {
    if (p.userId === userId) seen(p.userId);
  });
  // Wrapped: an async function returning the bare promise would wait for the event itself.
  return { event };
}

/** A TCP relay to Redis that can be cut, to play a Redis outage without touching the real one. */
async function startTcpProxy(target: URL): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
