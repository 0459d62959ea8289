import { JobBatchFailures, ManualClock, silentLogger, type GatewayJobs } from '@agentgw/core';
import { sql } from 'kysely';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAuditConsumer, RETENTION_INTERVAL_MS } from './audit-consumer.js';
import { writeBatch } from './batch-writer.js';
import { validJob, writeChainFixture } from './chain.fixtures.js';
import { verifyAll } from './verify.js';

const record = (id: string, over: Record<string, unknown> = {}) => ({
  op: 'create',
  id,
  key: `c:${id}`,
  seq: 1,
  at: '2026-01-01T00:00:00.000Z',
  userId: 'u',
  agentId: 'a',
  endUserId: null,
  providerId: 'p',
  tenantId: 't',
  toolName: 'fs.read',
  arguments: {},
  status: 'pending',
  ...over,
});

describe('audit consumer', () => {
  let deps: TestDeps;
  afterEach(() => deps.close());

  const consumer = (retentionDays = 0, reclaimAfterRetention = false) =>
    createAuditConsumer({
      db: deps.db,
      queue: deps.queue,
      clock: deps.clock,
      logger: silentLogger(),
      batchSize: 100,
      batchWaitMs: 10,
      retentionDays,
      reclaimAfterRetention,
    });
  const ids = async () =>
    (await deps.db.selectFrom('audit_logs').select('id').orderBy('id').execute()).map((r) => r.id);

  it('writes the good records of a batch and fails only the poison ones, with their reasons', async () => {
    deps = await createTestDeps();
    const records = [
      record('good-1'),
      { op: 'create', id: '' },
      record('year-zero', { at: '0000-06-01T00:00:00.000Z' }),
      record('good-2'),
      'junk',
    ];
    const failure = await consumer()
      .handleBulk(records.map((r) => ({ records: [r] })))
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(JobBatchFailures);
    const failures = (failure as JobBatchFailures).failures;
    expect([...failures.keys()]).toEqual([1, 4, 2]);
    expect(failures.get(1)?.message).toBe('invalid audit job: id: must be 1-200 characters');
    expect(failures.get(4)?.message).toBe('invalid audit job: not an object');
    // A time JavaScript reads but PostgreSQL refuses (there is no year 0) passes validation: found by writing one by one.
    expect(failures.get(2)?.message).toMatch(/out of range/i);
    expect(await ids()).toEqual(['good-1', 'good-2']);
  });

  it('writes many small audit-bulk jobs of the in-process queue in one transaction: their size fills a batch, not their count', async () => {
    deps = await createTestDeps();
    // Thirty groups of one record, as a busy gateway enqueues them; a count of jobs (batchSize
    // 100 / 100 = 1 per transaction) would cut them into thirty transactions.
    // The fixture's loose record (op: string) is what a producer sends; the queue's type is the producer's.
    const bulk = (id: string) => ({ records: [record(id)] }) as unknown as GatewayJobs['audit-bulk'];
    for (let i = 0; i < 30; i++) await deps.queue.enqueue('audit-bulk', bulk(`small-${i}`));
    const audit = consumer();
    await audit.start();
    await vi.waitFor(async () => expect(await ids()).toHaveLength(30));
    await audit.stop();
    // One transaction: now() is its start time, the same for every row it wrote.
    const times = await deps.db.selectFrom('audit_logs').select('updated_at').distinct().execute();
    expect(times).toHaveLength(1);
  });

  it('writes text PostgreSQL refuses as it stands (NUL, a lone surrogate) with U+FFFD in its place: a hostile tool name loses no record', async () => {
    deps = await createTestDeps();
    await consumer().handleBulk([
      { records: [record('nul', { toolName: 'a\u0000b', userId: 'u\uD800' }), record('ok')] },
    ]);
    const rows = await deps.db.selectFrom('audit_logs').select(['id', 'tool_name', 'user_id']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 'nul', tool_name: 'a\uFFFDb', user_id: 'u\uFFFD' },
      { id: 'ok', tool_name: 'fs.read', user_id: 'u' },
    ]);
  });

  it('fails a bulk job with its poison records and writes the rest', async () => {
    deps = await createTestDeps();
    const failure = await consumer()
      .handleBulk([
        { records: [record('b1'), { op: 'update' }] },
        { records: [record('b2'), record('b3')] },
        { nope: true },
      ])
      .catch((err: unknown) => err);
    expect([...(failure as JobBatchFailures).failures.keys()].sort()).toEqual([0, 2]);
    expect(await ids()).toEqual(['b1', 'b2', 'b3']);
  });

  it('runs retention hourly on the queue and keeps the chains verifiable', async () => {
    const clock = new ManualClock(Date.now());
    deps = await createTestDeps({ clock });
    await writeChainFixture(deps.db, 12);
    // Every link of four rows of t-a (creates and completions) written 40 days ago.
    await sql`update audit_chain set created_at = now() - interval '40 days' where tenant_key = 't-a'`.execute(deps.db);
    const c = consumer(30);
    await c.start();
    try {
      // Nothing runs before the next hour starts.
      await new Promise((r) => setTimeout(r, 100));
      expect(await ids()).toHaveLength(12);
      clock.advance(RETENTION_INTERVAL_MS);
      await vi.waitFor(async () => expect(await ids()).toHaveLength(8), { timeout: 10_000, interval: 50 });
      expect((await verifyAll(deps.db)).map((r) => [r.tenantKey, r.links, r.broken])).toEqual([
        ['', 8, undefined],
        ['t-a', 0, undefined],
        ['t-b', 8, undefined],
      ]);
      // And the next run is scheduled for the hour after.
      await sql`update audit_chain set created_at = now() - interval '40 days' where tenant_key = 't-b'`.execute(
        deps.db,
      );
      clock.advance(RETENTION_INTERVAL_MS);
      await vi.waitFor(async () => expect(await ids()).toHaveLength(4), { timeout: 10_000, interval: 50 });
    } finally {
      await c.stop();
    }
  });

  it.each([
    ['reuses', true],
    ['without vacuuming (as PostgreSQL leaves it to autovacuum), does not reuse', false],
  ])('%s the space retention freed in the embedded engine', async (_, reclaim) => {
    const clock = new ManualClock(Date.now());
    deps = await createTestDeps({ clock });
    const write = async (from: number) => {
      for (let b = 0; b < 4; b++) {
        const jobs = Array.from({ length: 500 }, (_, i) => {
          const id = `r-${from + b * 500 + i}`;
          return validJob(record(id, { arguments: { text: 'x'.repeat(200) } }));
        });
        await writeBatch(deps.db, jobs);
      }
    };
    const bytes = async () =>
      (
        await sql<{
          n: number;
        }>`select (pg_total_relation_size('audit_logs') + pg_total_relation_size('audit_chain'))::int as n`.execute(
          deps.db,
        )
      ).rows[0]!.n;
    await write(0);
    const full = await bytes();
    await sql`update audit_chain set created_at = now() - interval '40 days'`.execute(deps.db);
    const c = consumer(30, reclaim);
    await c.start();
    try {
      clock.advance(RETENTION_INTERVAL_MS);
      await vi.waitFor(async () => expect(await ids()).toHaveLength(0), { timeout: 10_000, interval: 50 });
      await vi.waitFor(async () => expect(await bytes()).toBeLessThan(reclaim ? full / 2 : Infinity), {
        timeout: 10_000,
        interval: 50,
      });
    } finally {
      await c.stop();
    }
    await write(2000);
    // The same 2,000 rows again: in the freed pages, or after them.
    if (reclaim) expect(await bytes()).toBeLessThan(full * 1.4);
    else expect(await bytes()).toBeGreaterThan(full * 1.8);
  });
});
