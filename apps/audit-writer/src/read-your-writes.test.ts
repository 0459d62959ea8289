import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createAuditTrail, type AuditTrail } from '@agentgw/audit';
import { BullJobQueue, systemClock } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, testHost, type TestDeps, type TestHost } from '@agentgw/service-kit/testing';
import { authHeaders, createUser, tokenFor } from '@agentgw/testkit';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STALE_HEADER } from './audit.routes.js';
import { auditWriterService } from './service.js';

type Entry = { id: string; status: string; agentId: string };
const ROUNDS = 50;

/** One call as a gateway records it; acknowledged once its create and outcome are enqueued. */
async function acknowledgedCall(trail: AuditTrail, agentId: string, n: number): Promise<string> {
  const id = await trail.open({
    userId: 'u-ryw',
    agentId,
    endUserId: null,
    providerId: 'p1',
    tenantId: 't-ryw',
    toolName: 'ryw.tool',
    arguments: { n },
    status: 'pending',
  });
  await trail.update(id, { status: 'completed', duration: 1 });
  return id;
}

/** The admin's view of one entry right now: status, the stale header, how long the answer took. */
async function readBack(host: TestHost, token: string, id: string) {
  const started = performance.now();
  const res = await host.request(`/api/v1/audit/logs/${id}`, { headers: authHeaders(token) });
  const body = res.status === 200 ? ((await res.json()) as { data: Entry }).data : null;
  return { status: res.status, entry: body, stale: res.headers.get(STALE_HEADER), ms: performance.now() - started };
}

describe.each(testBackends())('read-your-writes, all-in-one (in-process queue, %s)', (backend) => {
  let deps: TestDeps;
  let host: TestHost;
  let token: string;

  beforeAll(async () => {
    // The production batching: up to 1000 records per transaction, 50 ms for a batch to fill.
    deps = await createTestDeps({ backend });
    host = await testHost(auditWriterService, deps);
    token = await tokenFor(deps, await createUser(deps, { email: 'admin@ryw.test', roles: ['admin'] }));
  }, 180_000);
  afterAll(async () => {
    await host?.stop({ deadlineMs: 5000 });
    await deps?.close();
  });

  it(`shows a call in a query sent right after its acknowledgement, ${ROUNDS} times out of ${ROUNDS}, from two producers`, async () => {
    const producers = [
      createAuditTrail({ queue: deps.queue, clock: systemClock }),
      createAuditTrail({ queue: deps.queue, clock: systemClock }),
    ];
    const misses: string[] = [];
    for (let n = 0; n < ROUNDS; n++) {
      const id = await acknowledgedCall(producers[n % 2]!, `producer-${n % 2}`, n);
      const seen = await readBack(host, token, id);
      if (seen.status !== 200 || seen.entry?.status !== 'completed' || seen.stale !== null)
        misses.push(`${n}: ${seen.status} ${seen.entry?.status} stale=${seen.stale}`);
    }
    expect(misses).toEqual([]);
  }, 180_000);

  it('counts every call acknowledged before the query in the page total, the stats and the export', async () => {
    const trail = createAuditTrail({ queue: deps.queue, clock: systemClock });
    const before = (
      (await (await host.request('/api/v1/audit/stats', { headers: authHeaders(token) })).json()) as {
        data: { total: number };
      }
    ).data.total;
    // Twenty concurrent calls: one producer group, acknowledged together.
    await Promise.all(Array.from({ length: 20 }, (_, n) => acknowledgedCall(trail, 'burst', n)));
    const page = await host.request('/api/v1/audit/logs?agent_id=burst&status=completed', {
      headers: authHeaders(token),
    });
    expect(page.headers.get(STALE_HEADER)).toBeNull();
    expect(((await page.json()) as { pagination: { total: number } }).pagination.total).toBe(20);
    const stats = await host.request('/api/v1/audit/stats', { headers: authHeaders(token) });
    expect(((await stats.json()) as { data: { total: number } }).data.total).toBe(before + 20);
    await Promise.all(Array.from({ length: 5 }, (_, n) => acknowledgedCall(trail, 'burst-export', n)));
    const exported = await host.request('/api/v1/audit/export?agent_id=burst-export', { headers: authHeaders(token) });
    expect((await exported.text()).trim().split('\n')).toHaveLength(5);
  }, 180_000);

  it('answers a query fresh when nothing is pending', async () => {
    const res = await host.request('/api/v1/audit/logs?limit=1', { headers: authHeaders(token) });
    expect(res.status).toBe(200);
    // Not stale: the barrier settled rather than running out (that it answers at once is job-queue.test's barrier contract).
    expect(res.headers.get(STALE_HEADER)).toBeNull();
  });

  it('answers marked stale while an earlier record is retrying after a failed write; fresh again once it failed for good', async () => {
    const trail = createAuditTrail({ queue: deps.queue, clock: systemClock });
    const good = await acknowledgedCall(trail, 'before-poison', 0);
    const bad = {
      op: 'create' as const,
      id: 'ryw-poison',
      key: 'c:ryw-poison',
      seq: 1,
      at: new Date().toISOString(),
      userId: null,
      agentId: null,
      endUserId: null,
      providerId: null,
      tenantId: null,
      toolName: 't',
      arguments: {},
      status: 'exploded' as never,
    };
    // Its batch fails on every attempt (1 s, then 2 s of backoff in-process) until it is given up.
    await deps.queue.enqueue('audit-bulk', { records: [bad] }, { attempts: 2 });
    const seen = await vi.waitFor(
      async () => {
        const r = await readBack(host, token, good);
        expect(r.stale).toBe('true');
        return r;
      },
      { timeout: 5000, interval: 20 },
    );
    // That the barrier answers a retrying record at once, without its deadline, is job-queue.test's barrier contract.
    expect(seen.status).toBe(200);
    for (const path of ['/api/v1/audit/logs', '/api/v1/audit/stats', '/api/v1/audit/export']) {
      const res = await host.request(path, { headers: authHeaders(token) });
      expect([path, res.status, res.headers.get(STALE_HEADER)]).toEqual([path, 200, 'true']);
      await res.body?.cancel();
    }
    await vi.waitFor(async () => expect((await readBack(host, token, good)).stale).toBeNull(), {
      timeout: 10_000,
      interval: 100,
    });
  }, 180_000);
});

const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** A child process on tsx whose stdout lines can be awaited one at a time. */
function child(file: string, env: Record<string, string>) {
  const proc: ChildProcess = spawn(process.execPath, ['--import', 'tsx', here(file)], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    const waiter = waiters.shift();
    if (waiter) waiter(line);
    else lines.push(line);
  });
  const exited = new Promise<never>((_, reject) =>
    proc.on('exit', (code) => reject(new Error(`${file} exited (${code})`))),
  );
  exited.catch(() => {});
  return {
    proc,
    next: () =>
      Promise.race([
        lines.length > 0 ? Promise.resolve(lines.shift()!) : new Promise<string>((resolve) => waiters.push(resolve)),
        exited,
      ]),
    send: (line: string) => proc.stdin!.write(`${line}\n`),
  };
}

describe.skipIf(!databaseUrl || !redisUrl)(
  'read-your-writes, distributed (BullMQ, PostgreSQL, writers and producers in separate processes)',
  () => {
    const prefix = `test-ryw-${randomUUID()}`;
    let deps: TestDeps;
    let writerQueue: BullJobQueue;
    let host: TestHost;
    let token: string;
    const children: ReturnType<typeof child>[] = [];

    beforeAll(async () => {
      // Batches that would wait 10 s to fill, far past the read bound: only the barrier's flush request makes a query see its call in time.
      deps = await createTestDeps({ backend: 'postgres', env: { AUDIT_BATCH_WAIT_MS: '10000' } });
      writerQueue = new BullJobQueue({ url: redisUrl!, prefix });
      host = await testHost(auditWriterService, { ...deps, queue: writerQueue });
      token = await tokenFor(deps, await createUser(deps, { email: 'admin@ryw.test', roles: ['admin'] }));
      const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(deps.db);
      const dbUrl = new URL(databaseUrl!);
      dbUrl.pathname = `/${rows[0]!.name}`;
      const env = { REDIS_URL: redisUrl!, AUDIT_QUEUE_PREFIX: prefix };
      // A second writer replica in its own process, and two gateway-like producers.
      const writer = child('./writer-process.fixtures.ts', {
        ...env,
        DATABASE_URL: dbUrl.toString(),
        AUDIT_BATCH_WAIT_MS: '10000',
      });
      children.push(writer);
      expect(await writer.next()).toBe('ready');
      for (const name of ['producer-a', 'producer-b'])
        children.push(child('./producer-process.fixtures.ts', { ...env, PRODUCER_NAME: name }));
    }, 180_000);
    afterAll(async () => {
      for (const c of children) c.proc.kill('SIGKILL');
      await host?.stop({ deadlineMs: 5000 });
      await writerQueue?.close();
      await deps?.close();
      const redis = new Redis(redisUrl!);
      const keys: string[] = [];
      for await (const batch of redis.scanStream({ match: `bull:${prefix}-*`, count: 1000 }))
        keys.push(...(batch as string[]));
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    it(`shows a call acknowledged by another process in a query sent right after, ${ROUNDS} times out of ${ROUNDS}, with two producer processes and two writers`, async () => {
      const producers = children.slice(1);
      const misses: string[] = [];
      const times: number[] = [];
      for (let n = 0; n < ROUNDS; n++) {
        const producer = producers[n % 2]!;
        producer.send(String(n));
        const [word, echoed, id] = (await producer.next()).split(' ');
        expect([word, echoed]).toEqual(['ack', String(n)]);
        const seen = await readBack(host, token, id!);
        times.push(seen.ms);
        if (seen.status !== 200 || seen.entry?.status !== 'completed' || seen.stale !== null)
          misses.push(`${n}: ${seen.status} ${seen.entry?.status} stale=${seen.stale}`);
        else expect(seen.entry.agentId).toBe(`producer-${n % 2 === 0 ? 'a' : 'b'}`);
      }
      // None stale: with batches that wait 10 s to fill, far past the read barrier's bound, every
      // read settled only because the writers handed their partial batches over when asked.
      expect(misses).toEqual([]);
      times.sort((a, b) => a - b);
      console.log(
        `read-back after acknowledgement: p50 ${times[ROUNDS / 2]!.toFixed(0)} ms, max ${times.at(-1)!.toFixed(0)} ms`,
      );
    }, 120_000);

    it('answers fresh when nothing is pending', async () => {
      const res = await host.request('/api/v1/audit/logs?limit=1', { headers: authHeaders(token) });
      expect([res.status, res.headers.get(STALE_HEADER)]).toEqual([200, null]);
    });
  },
);
