/**
 * Read-your-writes through the audit routes, per run mode: how long after a call is acknowledged
 * (its records enqueued by an `AuditTrail`) a `GET /api/v1/audit/logs/:id` shows it, and the
 * write throughput while such read-backs run. The writer runs with its default batching
 * (1000 records per transaction, 50 ms batch wait).
 */
import { randomUUID } from 'node:crypto';
import { createAuditTrail, type AuditTrail } from '@agentgw/audit';
import { BullJobQueue, systemClock, type JobQueue } from '@agentgw/core';
import { createTestDeps, testHost, type TestHost } from '@agentgw/service-kit/testing';
import { authHeaders, createUser, tokenFor } from '@agentgw/testkit';
import { auditWriterService } from '../src/service.js';

export type BenchMode = 'all-in-one' | 'distributed';

export interface AckToVisibleOptions {
  mode: BenchMode;
  redisUrl: string;
  /** Sequential call-then-read-back samples under a light background load. */
  samples: number;
  /** Records produced flat out for the throughput figure (0 skips it). */
  records: number;
  line: (text: string) => void;
  /** Removes the scratch queue's keys (distributed mode). */
  dropQueue: (prefix: string) => Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
const READ_BACK_DEADLINE_MS = 10_000;

/** One call as a gateway records it: the create, then its outcome; acknowledged once both are enqueued. */
async function acknowledgedCall(trail: AuditTrail, n: number): Promise<string> {
  const id = await trail.open({
    userId: `u${n % 7}`,
    agentId: 'a1',
    endUserId: null,
    providerId: 'p1',
    tenantId: 't1',
    toolName: `tool.${n % 5}`,
    arguments: { n },
    status: 'pending',
  });
  await trail.update(id, { status: 'completed', duration: 3 });
  return id;
}

/** Queries the entry until it shows the outcome; returns the time from the call's acknowledgement and whether the first query already did. */
async function readBack(
  host: TestHost,
  token: string,
  trail: AuditTrail,
  n: number,
): Promise<{ ms: number; firstHit: boolean }> {
  const id = await acknowledgedCall(trail, n);
  const acked = performance.now();
  for (let attempt = 0; ; attempt++) {
    const res = await host.request(`/api/v1/audit/logs/${id}`, { headers: authHeaders(token) });
    const body = res.status === 200 ? ((await res.json()) as { data: { status: string } }) : await res.text();
    if (typeof body === 'object' && body.data.status === 'completed')
      return { ms: performance.now() - acked, firstHit: attempt === 0 };
    if (performance.now() - acked > READ_BACK_DEADLINE_MS)
      throw new Error(`entry ${id} not visible ${READ_BACK_DEADLINE_MS} ms after its acknowledgement`);
    await sleep(1);
  }
}

function summary(label: string, results: { ms: number; firstHit: boolean }[]): string {
  const times = results.map((r) => r.ms).sort((a, b) => a - b);
  const misses = results.filter((r) => !r.firstHit).length;
  return `${label}: ${results.length} calls, acknowledgement to visible p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms, max ${times.at(-1)?.toFixed(1)} ms; first query missed the call ${misses} times`;
}

/** Runs both measurements in one mode: all-in-one (PGlite, in-process queue) or distributed (PostgreSQL, BullMQ, a separate producer connection). */
export async function ackToVisible(options: AckToVisibleOptions): Promise<void> {
  const { mode, line } = options;
  const deps = await createTestDeps({ backend: mode === 'all-in-one' ? 'pglite' : 'postgres' });
  const prefix = `bench-ryw-${randomUUID()}`;
  const queues: JobQueue[] = [];
  let host: TestHost | undefined;
  try {
    let writerQueue: JobQueue = deps.queue;
    let producerQueue: JobQueue = deps.queue;
    if (mode === 'distributed') {
      // The writer and a gateway replica each with their own connections, as separate processes have.
      writerQueue = new BullJobQueue({ url: options.redisUrl, prefix });
      producerQueue = new BullJobQueue({ url: options.redisUrl, prefix });
      queues.push(writerQueue, producerQueue);
    }
    host = await testHost(auditWriterService, { ...deps, queue: writerQueue });
    const admin = await createUser(deps, { email: 'bench-admin@x.test', roles: ['admin'] });
    const token = await tokenFor(deps, admin);
    const trail = createAuditTrail({ queue: producerQueue, clock: systemClock });
    let n = 0;

    // Light background load (about 400 calls/s in groups of 20), as other agents' calls would be.
    let loading = true;
    const load = (async () => {
      while (loading) {
        await Promise.all(Array.from({ length: 20 }, () => acknowledgedCall(trail, n++)));
        await sleep(50);
      }
    })();
    const samples: { ms: number; firstHit: boolean }[] = [];
    for (let i = 0; i < options.samples; i++) samples.push(await readBack(host, token, trail, n++));
    loading = false;
    await load;
    line(summary(`${mode}, read-your-writes under ~400 calls/s`, samples));

    if (options.records > 0) {
      // Flat out: 200 concurrent callers until `records` records are acknowledged, while a reader reads its own calls back.
      const start = performance.now();
      let producing = true;
      const reads: { ms: number; firstHit: boolean }[] = [];
      const reader = (async () => {
        while (producing) reads.push(await readBack(host, token, trail, n++));
      })();
      const calls = options.records / 2;
      for (let i = 0; i < calls; i += 200)
        await Promise.all(Array.from({ length: Math.min(200, calls - i) }, () => acknowledgedCall(trail, n++)));
      const ackedS = (performance.now() - start) / 1000;
      producing = false;
      await reader;
      // Every call so far is one completed row: wait for all of them.
      for (;;) {
        const { rows } = await deps.db
          .selectFrom('audit_logs')
          .select((eb) => eb.fn.countAll<number>().as('rows'))
          .where('status', '=', 'completed')
          .executeTakeFirstOrThrow();
        if (Number(rows) >= n) break;
        if (performance.now() - start > 120_000) throw new Error(`only ${rows} of ${n} rows written after 120 s`);
        await sleep(20);
      }
      const seconds = (performance.now() - start) / 1000;
      line(
        `${mode}, write: ${options.records} records acknowledged in ${ackedS.toFixed(2)} s and written in ${seconds.toFixed(2)} s = ${Math.round(options.records / seconds)} records/s`,
      );
      line(summary(`${mode}, read-your-writes during that write`, reads));
    }
  } finally {
    await host?.stop({ deadlineMs: 10_000 });
    for (const queue of queues) await queue.close();
    await deps.close();
    if (mode === 'distributed') await options.dropQueue(prefix);
  }
}
