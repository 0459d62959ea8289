import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createAuditTrail } from '@agentgw/audit';
import { BullJobQueue, silentLogger, systemClock } from '@agentgw/core';
import { migrateToLatest, openDatabase, type DbHandle } from '@agentgw/db';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAuditConsumer } from './audit-consumer.js';
import { verifyAll } from './verify.js';

const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const fixture = fileURLToPath(new URL('./writer-process.fixtures.ts', import.meta.url));

describe.skipIf(!databaseUrl || !redisUrl)('audit writer on BullMQ + PostgreSQL', () => {
  const prefix = `test-kill-${randomUUID()}`;
  const dbName = `agentgw_t_kill_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  let admin: DbHandle;
  let handle: DbHandle;
  let dbUrl: string;
  const children = new Set<ChildProcess>();

  beforeAll(async () => {
    admin = await openDatabase({ url: databaseUrl });
    await sql`create database ${sql.id(dbName)}`.execute(admin.db);
    const url = new URL(databaseUrl!);
    url.pathname = `/${dbName}`;
    dbUrl = url.toString();
    handle = await openDatabase({ url: dbUrl });
    await migrateToLatest(handle.db);
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await handle?.close();
    await sql`drop database if exists ${sql.id(dbName)} with (force)`.execute(admin.db);
    await admin?.close();
    const redis = new Redis(redisUrl!);
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `bull:${prefix}*`, count: 1000 }))
      keys.push(...(batch as string[]));
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  const startWriterUnderTest = async (): Promise<ChildProcess> => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
      env: { ...process.env, DATABASE_URL: dbUrl, REDIS_URL: redisUrl, AUDIT_QUEUE_PREFIX: prefix },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`writer exited early (${code})`)));
    });
    return child;
  };
  const count = async (where = sql`true`) =>
    Number(
      (await sql<{ n: number }>`select count(*)::int as n from audit_logs where ${where}`.execute(handle.db)).rows[0]!
        .n,
    );

  // A writer process SIGKILLed while it holds jobs, then a new one: BullMQ redelivers what the
  // dead one held, and the writer's idempotency keeps every record exactly once.
  it('killed mid-batch and restarted, loses and doubles nothing', async () => {
    const RECORDS = 6000;
    const producer = new BullJobQueue({ url: redisUrl!, prefix });
    const trail = createAuditTrail({ queue: producer, clock: systemClock });
    const ids: string[] = [];
    // Groups of 50 concurrent calls: 120 bulk jobs of creates, then one update per record in 120 more.
    for (let i = 0; i < RECORDS; i += 50) {
      ids.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, k) =>
            trail.open({
              userId: 'u',
              agentId: 'a',
              endUserId: null,
              providerId: 'p',
              tenantId: `t${(i + k) % 3}`,
              toolName: 'fs.read',
              arguments: { n: i + k },
              status: 'pending',
            }),
          ),
        )),
      );
    }
    for (let i = 0; i < RECORDS; i += 50) {
      await Promise.all(
        ids.slice(i, i + 50).map((id, k) => trail.update(id, { status: 'completed', duration: i + k })),
      );
    }
    await producer.close();

    const first = await startWriterUnderTest();
    // Kill it once part of the log is written, while it holds jobs.
    await vi.waitFor(async () => expect(await count()).toBeGreaterThan(RECORDS / 4), { timeout: 60_000, interval: 5 });
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const writtenAtKill = await count();
    const inspect = new Queue(`${prefix}-audit-bulk`, { connection: { url: redisUrl! } });
    const heldAtKill = await inspect.getActiveCount();
    await inspect.close();
    console.log(
      `killed the writer with ${writtenAtKill} of ${RECORDS} rows written and ${heldAtKill} bulk jobs in its hands`,
    );
    expect(writtenAtKill).toBeLessThan(RECORDS);
    expect(heldAtKill).toBeGreaterThan(0);

    await startWriterUnderTest();
    // Complete rows, not placeholders: the creates the killed writer held come back only once their
    // lock expires, after updates queued behind them may already have made completed placeholders.
    await vi.waitFor(
      async () => expect(await count(sql`status = 'completed' and tool_name is not null`)).toBe(RECORDS),
      {
        timeout: 90_000,
        interval: 100,
      },
    );
    const rows = await count();
    const distinct = Number(
      (await sql<{ n: number }>`select count(distinct id)::int as n from audit_logs`.execute(handle.db)).rows[0]!.n,
    );
    const durations = Number(
      (
        await sql<{ n: number }>`select count(*)::int as n from audit_logs where duration is not null`.execute(
          handle.db,
        )
      ).rows[0]!.n,
    );
    const links = Number(
      (await sql<{ n: number }>`select count(*)::int as n from audit_chain`.execute(handle.db)).rows[0]!.n,
    );
    console.log(
      `after the restart: ${rows} rows (${distinct} distinct ids), ${durations} with their update, ${links} chain links`,
    );
    expect(rows).toBe(RECORDS);
    expect(distinct).toBe(RECORDS);
    expect(durations).toBe(RECORDS);
    expect(await count(sql`tool_name is null`)).toBe(0);
    // One link per job written; an update that overtook its create was merged without one.
    expect(links).toBeGreaterThanOrEqual(RECORDS);
    expect(links).toBeLessThanOrEqual(2 * RECORDS);
    expect((await verifyAll(handle.db)).filter((r) => r.broken)).toEqual([]);
    const failed = new Queue(`${prefix}-audit-bulk`, { connection: { url: redisUrl! } });
    expect(await failed.getFailedCount()).toBe(0);
    await failed.close();
  }, 180_000);

  it("puts a poison record's job in the failed set with the reason, and writes the good ones", async () => {
    const queue = new BullJobQueue({ url: redisUrl!, prefix: `${prefix}-poison`, backoffMs: 20 });
    const errors: unknown[] = [];
    const logger = silentLogger();
    logger.error = (obj: unknown) => {
      errors.push(obj);
    };
    const consumer = createAuditConsumer({
      db: handle.db,
      queue,
      clock: systemClock,
      logger,
      batchSize: 100,
      batchWaitMs: 5,
      retentionDays: 0,
    });
    const good = {
      op: 'create' as const,
      id: 'poison-test-good',
      key: 'c:poison-test-good',
      seq: 1,
      at: new Date().toISOString(),
      userId: null,
      agentId: null,
      endUserId: null,
      providerId: null,
      tenantId: null,
      toolName: 't',
      arguments: {},
      status: 'completed' as const,
    };
    await queue.enqueue(
      'audit-bulk',
      { records: [good, { ...good, id: 'poison-test-bad', key: 'c:bad', status: 'exploded' as never }] },
      { attempts: 2, keepFailed: true },
    );
    await consumer.start();
    const inspect = new Queue(`${prefix}-poison-audit-bulk`, { connection: { url: redisUrl! } });
    try {
      await vi.waitFor(async () => expect(await inspect.getFailedCount()).toBe(1), { timeout: 20_000, interval: 50 });
      const [failed] = await inspect.getFailed();
      expect(failed?.failedReason).toBe('invalid audit job: status: must be a known status');
      expect(errors).toContainEqual({
        auditId: 'poison-test-bad',
        jobKey: 'c:bad',
        reason: 'invalid audit job: status: must be a known status',
      });
      expect(await count(sql`id = 'poison-test-good'`)).toBe(1);
      expect(await count(sql`id = 'poison-test-bad'`)).toBe(0);
    } finally {
      await inspect.close();
      await consumer.stop();
      await queue.close();
    }
  }, 180_000);
});
