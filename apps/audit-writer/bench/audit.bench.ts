/**
 * `pnpm --filter @agentgw/audit-writer bench`: audit rows per second written through BullMQ
 * (Redis) into PostgreSQL, and the p95 of filtered page queries at 1 million rows. Uses scratch
 * databases and a scratch queue prefix, dropped at the end. Loopback only; bounded in time.
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres: the server where
 * scratch databases are created), BENCH_REDIS_URL (default redis://127.0.0.1:6379),
 * BENCH_JOBS (default 100000; 0 skips), BENCH_ROWS (default 1000000; 0 skips), BENCH_QUERIES
 * (default 200), BENCH_CONCURRENCY (writer batches in flight, default 4 as AUDIT_WRITE_CONCURRENCY).
 * Read-your-writes (acknowledgement to visible through the routes, and write throughput while
 * reading back): BENCH_MODES (default `all-in-one,distributed`; empty skips), BENCH_SAMPLES
 * (default 200), BENCH_RYW_RECORDS (default 20000 per mode).
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { createAuditTrail } from '@agentgw/audit';
import { BullJobQueue, silentLogger, systemClock } from '@agentgw/core';
import { migrateToLatest, openDatabase, type DbHandle } from '@agentgw/db';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { createAuditConsumer } from '../src/audit-consumer.js';
import { listEntries, visibleFilter } from '../src/audit-query.js';
import { ackToVisible, type BenchMode } from './ack-to-visible.js';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const JOBS = Number(process.env.BENCH_JOBS ?? 100_000);
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const MODES = (process.env.BENCH_MODES ?? 'all-in-one,distributed').split(',').filter(Boolean) as BenchMode[];
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const RYW_RECORDS = Number(process.env.BENCH_RYW_RECORDS ?? 20_000);
const DEADLINE_MS = 5 * 60_000;
// The distributed read-your-writes case makes its scratch database where the tests make theirs.
process.env.TEST_DATABASE_URL ??= serverUrl;

const line = (text: string) => process.stdout.write(`${text}\n`);

async function withScratchDatabase<T>(fn: (handle: DbHandle) => Promise<T>): Promise<T> {
  const name = `agentgw_bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = await openDatabase({ url: serverUrl });
  await sql`create database ${sql.id(name)}`.execute(admin.db);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ url: url.toString() });
  try {
    await migrateToLatest(handle.db);
    return await fn(handle);
  } finally {
    await handle.close();
    await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db);
    await admin.close();
  }
}

async function dropQueue(prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `bull:${prefix}-*`, count: 1000 }))
      keys.push(...(batch as string[]));
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  } finally {
    await redis.quit();
  }
}

/** Rows/s through the queue: jobs enqueued first, then timed from the consumer's start to the last row. */
async function writeThroughput(handle: DbHandle): Promise<void> {
  const prefix = `bench-${randomUUID()}`;
  const queue = new BullJobQueue({ url: redisUrl, prefix });
  try {
    const trail = createAuditTrail({ queue, clock: systemClock });
    const enqueueStart = performance.now();
    const tenants = ['t1', 't2', 't3', 't4', null];
    for (let i = 0; i < JOBS; i += 1000) {
      await Promise.all(
        Array.from({ length: Math.min(1000, JOBS - i) }, (_, k) =>
          trail.open({
            userId: `u${(i + k) % 97}`,
            agentId: `a${(i + k) % 13}`,
            endUserId: null,
            providerId: 'p1',
            tenantId: tenants[(i + k) % 5] ?? null,
            toolName: `tool.${(i + k) % 20}`,
            arguments: { path: `/data/${i + k}`, token: 'secret' },
            status: 'completed',
          }),
        ),
      );
    }
    const enqueueS = (performance.now() - enqueueStart) / 1000;
    line(
      `enqueue: ${JOBS} audit records (grouped by the producer into audit-bulk jobs of up to 500) into BullMQ in ${enqueueS.toFixed(1)} s (${Math.round(JOBS / enqueueS)} records/s)`,
    );

    const consumer = createAuditConsumer({
      db: handle.db,
      queue,
      clock: systemClock,
      logger: silentLogger(),
      batchSize: 1000,
      batchWaitMs: 20,
      retentionDays: 0,
      concurrency: CONCURRENCY,
    });
    const start = performance.now();
    await consumer.start();
    for (;;) {
      const { n } = await handle.db
        .selectFrom('audit_logs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      if (Number(n) >= JOBS) break;
      if (performance.now() - start > DEADLINE_MS) throw new Error(`only ${n} of ${JOBS} rows after the deadline`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const seconds = (performance.now() - start) / 1000;
    await consumer.stop();
    const links = await handle.db
      .selectFrom('audit_chain')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    line(
      `write: ${JOBS} rows (+${links.n} chain links) through BullMQ into PostgreSQL in ${seconds.toFixed(2)} s = ${Math.round(JOBS / seconds)} rows/s (batches of up to 1000 records, ${CONCURRENCY} in flight)`,
    );
  } finally {
    await queue.close();
    await dropQueue(prefix);
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** p95 of filtered first pages (with their exact totals) over ROWS generated rows. */
async function queryLatency(handle: DbHandle): Promise<void> {
  const genStart = performance.now();
  await sql`
    insert into audit_logs (id, user_id, agent_id, tenant_id, provider_id, tool_name, arguments, status, duration, created_at, updated_at)
    select 'gen-' || g, 'u' || (g % 1000), 'a' || (g % 50), 't' || (g % 20), 'p1', 'tool.' || (g % 100), jsonb_build_object('i', g),
      (array['pending','confirmed','rejected','completed','failed'])[1 + g % 5], g % 500,
      date_trunc('milliseconds', timestamptz '2026-01-01' + (g || ' seconds')::interval), now()
    from generate_series(1, ${ROWS}) g`.execute(handle.db);
  // As autovacuum leaves a settled table: visibility map set, so counts can use index-only scans.
  await sql`vacuum analyze audit_logs`.execute(handle.db);
  line(
    `generated ${ROWS} rows with INSERT ... SELECT generate_series in ${((performance.now() - genStart) / 1000).toFixed(1)} s`,
  );

  const admin = { roles: ['admin'] } as never;
  const tenantAdmin = (t: string) => ({ roles: ['tenant_admin'], tenantId: t, userId: 'x' }) as never;
  const creator = (u: string) => ({ roles: ['agent_creator'], tenantId: null, userId: u }) as never;
  const shapes: [string, (i: number) => Promise<unknown>][] = [
    [
      'tenant admin, own tenant',
      (i) => listEntries(handle.db, visibleFilter(tenantAdmin(`t${i % 20}`), {}), { limit: 50, offset: 0 }),
    ],
    [
      'agent_creator, own entries',
      (i) => listEntries(handle.db, visibleFilter(creator(`u${i % 1000}`), {}), { limit: 50, offset: 0 }),
    ],
    [
      'admin, agent + status',
      (i) =>
        listEntries(handle.db, visibleFilter(admin, { agentId: `a${i % 50}`, status: 'failed' }), {
          limit: 50,
          offset: 0,
        }),
    ],
    [
      'admin, tool + date range',
      (i) =>
        listEntries(
          handle.db,
          visibleFilter(admin, {
            toolName: `tool.${i % 100}`,
            from: new Date('2026-01-03'),
            before: new Date('2026-01-06'),
          }),
          { limit: 50, offset: 0 },
        ),
    ],
    [
      'tenant admin, tenant + page 20',
      (i) => listEntries(handle.db, visibleFilter(tenantAdmin(`t${i % 20}`), {}), { limit: 50, offset: 1000 }),
    ],
  ];
  for (const [name, run] of shapes) {
    const times: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const t = performance.now();
      await run(i);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    line(
      `query at ${ROWS} rows, ${name} (page of 50 + exact total): p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`,
    );
  }
}

async function main(): Promise<void> {
  // Other work on the machine skews every figure: print how busy it was.
  line(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  if (JOBS > 0) await withScratchDatabase(writeThroughput);
  if (ROWS > 0) await withScratchDatabase(queryLatency);
  for (const mode of MODES)
    await ackToVisible({ mode, redisUrl, samples: SAMPLES, records: RYW_RECORDS, line, dropQueue });
  line(
    `machine: load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
}

const timer = setTimeout(() => {
  console.error('bench: over its time bound; stopping');
  process.exit(1);
}, 2 * DEADLINE_MS);
timer.unref();
await main();
