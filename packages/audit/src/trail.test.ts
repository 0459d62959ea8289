import { ManualClock, MemoryJobQueue, type AuditRecordJob, type JobQueue } from '@agentgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MASK } from './masking.js';
import { createAuditTrail, MAX_GROUP_RECORDS, OUTCOME_WAIT_MS } from './trail.js';

const entry = {
  userId: 'u1',
  agentId: 'a1',
  endUserId: null,
  providerId: 'p1',
  tenantId: 't1',
  toolName: 'fs.read',
  arguments: { path: '/x', password: 'hunter2' },
  status: 'pending' as const,
};

describe('createAuditTrail', () => {
  let queue: MemoryJobQueue;
  afterEach(() => queue.close());

  /** Records as the writer sees them, and the bulk jobs that carried them. */
  const collect = async () => {
    const jobs: AuditRecordJob[] = [];
    await queue.consume('audit-bulk', async (batch) => {
      for (const job of batch) {
        groups.push(job.records.length);
        jobs.push(...job.records);
      }
    });
    return jobs;
  };
  let groups: number[] = [];
  afterEach(() => {
    groups = [];
  });

  it('enqueues a masked create with the id it returns, then updates under the same id', async () => {
    queue = new MemoryJobQueue();
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 10));
    const trail = createAuditTrail({ queue, clock });
    const id = await trail.open(entry);
    clock.advance(5);
    await trail.update(id, { status: 'completed', result: { ok: true, token: 's3cr3t' }, duration: 12, error: null });
    const jobs = await collect();
    await vi.waitFor(() => expect(jobs).toHaveLength(2));
    const [create, update] = jobs as [AuditRecordJob, AuditRecordJob];
    expect(create).toEqual({
      op: 'create',
      id,
      key: `c:${id}`,
      seq: 1,
      at: '2026-01-01T10:00:00.000Z',
      userId: 'u1',
      agentId: 'a1',
      endUserId: null,
      providerId: 'p1',
      tenantId: 't1',
      toolName: 'fs.read',
      arguments: { path: '/x', password: MASK },
      status: 'pending',
    });
    expect(update).toMatchObject({
      op: 'update',
      id,
      seq: 2,
      at: '2026-01-01T10:00:00.005Z',
      patch: { status: 'completed', result: { ok: true, token: MASK }, duration: 12, error: null },
    });
    expect(update.key).toMatch(/^u:/);
    expect(JSON.stringify(jobs)).not.toMatch(/hunter2|s3cr3t/);
  });

  it('takes the outcome of a call opened with-outcome into its create: one record, both callers settle', async () => {
    queue = new MemoryJobQueue();
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 10));
    const trail = createAuditTrail({ queue, clock });
    const opened = trail.open({ ...entry, id: 'quick' }, 'with-outcome');
    clock.advance(5);
    const finished = trail.update('quick', { status: 'completed', result: { token: 's3cr3t' }, duration: 5 });
    await expect(Promise.all([opened, finished])).resolves.toEqual(['quick', undefined]);
    const jobs = await collect();
    await vi.waitFor(() => expect(jobs).toHaveLength(1));
    expect(jobs[0]).toMatchObject({
      op: 'create',
      id: 'quick',
      key: 'c:quick',
      at: '2026-01-01T10:00:00.000Z',
      arguments: { path: '/x', password: MASK },
      status: 'completed',
      result: { token: MASK },
      duration: 5,
    });
    expect(groups).toEqual([1]);
  });

  it(`sends a with-outcome create alone once ${OUTCOME_WAIT_MS} ms pass without its outcome (a slow call)`, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      queue = new MemoryJobQueue();
      const trail = createAuditTrail({ queue, clock: new ManualClock() });
      let landed = false;
      const opened = trail.open({ ...entry, id: 'slow' }, 'with-outcome').then(() => (landed = true));
      const jobs = await collect();
      await new Promise((r) => setImmediate(r));
      expect(landed).toBe(false);
      vi.advanceTimersByTime(OUTCOME_WAIT_MS);
      await opened;
      await trail.update('slow', { status: 'failed', error: 'upstream timed out' });
      vi.advanceTimersByTime(100); // the consumer's batch wait
      await vi.waitFor(() => expect(jobs.map((j) => j.op)).toEqual(['create', 'update']));
      expect(jobs[0]).toMatchObject({ status: 'pending' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('sends an update a parked create cannot take in (a confirmer) after the create, as its own record', async () => {
    queue = new MemoryJobQueue();
    const trail = createAuditTrail({ queue, clock: new ManualClock() });
    const opened = trail.open({ ...entry, id: 'held' }, 'with-outcome');
    await Promise.all([opened, trail.update('held', { status: 'confirmed', confirmedBy: 'admin-1' })]);
    const jobs = await collect();
    await vi.waitFor(() => expect(jobs).toHaveLength(2));
    expect(jobs[0]).toMatchObject({ op: 'create', id: 'held', status: 'pending' });
    expect(jobs[1]).toMatchObject({ op: 'update', id: 'held', patch: { confirmedBy: 'admin-1' } });
  });

  it('keeps a given id, and leaves out of an update what the patch leaves out', async () => {
    queue = new MemoryJobQueue();
    const trail = createAuditTrail({ queue, clock: new ManualClock() });
    expect(await trail.open({ ...entry, id: 'given-id' })).toBe('given-id');
    await trail.update('given-id', { confirmedBy: 'admin-1' });
    const jobs = await collect();
    await vi.waitFor(() => expect(jobs).toHaveLength(2));
    const update = jobs.find((j) => j.op === 'update')!;
    expect(update).toEqual({
      op: 'update',
      id: 'given-id',
      key: expect.stringMatching(/^u:/),
      seq: 2,
      at: expect.any(String),
      patch: { confirmedBy: 'admin-1' },
    });
  });

  it('opens a refusal with its reason in the one create job', async () => {
    queue = new MemoryJobQueue();
    const trail = createAuditTrail({ queue, clock: new ManualClock() });
    await trail.open({ ...entry, id: 'refused', status: 'rejected', error: 'Denied by an access rule' });
    const jobs = await collect();
    await vi.waitFor(() => expect(jobs).toHaveLength(1));
    expect(jobs[0]).toMatchObject({
      op: 'create',
      id: 'refused',
      status: 'rejected',
      error: 'Denied by an access rule',
    });
  });

  it('gives every update a key of its own, so two updates are two jobs', async () => {
    queue = new MemoryJobQueue();
    const trail = createAuditTrail({ queue, clock: new ManualClock() });
    await trail.update('x', { status: 'confirmed' });
    await trail.update('x', { status: 'confirmed' });
    const jobs = await collect();
    await vi.waitFor(() => expect(jobs).toHaveLength(2));
    expect(jobs[0]!.key).not.toBe(jobs[1]!.key);
  });

  it('sends records issued in one turn as one job, and awaited ones as separate jobs', async () => {
    queue = new MemoryJobQueue();
    const trail = createAuditTrail({ queue, clock: new ManualClock() });
    await Promise.all([trail.open(entry), trail.open(entry), trail.update('x', { status: 'failed' })]);
    await trail.open(entry);
    const jobs = await collect();
    await vi.waitFor(() => expect(jobs).toHaveLength(4));
    expect(groups).toEqual([3, 1]);
  });

  it(`splits a group at ${MAX_GROUP_RECORDS} records and at 1 MiB`, async () => {
    queue = new MemoryJobQueue();
    const trail = createAuditTrail({ queue, clock: new ManualClock() });
    await Promise.all(Array.from({ length: MAX_GROUP_RECORDS + 1 }, () => trail.open(entry)));
    // 100 bodies of ~15 KiB: about 1.5 MiB in all.
    await Promise.all(
      Array.from({ length: 100 }, () => trail.open({ ...entry, arguments: { s: 'x'.repeat(15_000) } })),
    );
    const jobs = await collect();
    await vi.waitFor(() => expect(jobs).toHaveLength(MAX_GROUP_RECORDS + 101));
    expect(groups.slice(0, 2)).toEqual([MAX_GROUP_RECORDS, 1]);
    expect(groups.slice(2).reduce((a, b) => a + b, 0)).toBe(100);
    expect(groups.length).toBeGreaterThan(3);
  });

  it('fills the next group while one is on its way, and sends it as soon as that one lands', async () => {
    queue = new MemoryJobQueue();
    const sent: number[] = [];
    const landings: (() => void)[] = [];
    // A queue whose enqueues land only when the test says so (a slow Redis).
    const slow: JobQueue = {
      enqueue: (_name, data) => {
        sent.push((data as { records: unknown[] }).records.length);
        return new Promise<void>((resolve) => landings.push(resolve));
      },
      cancel: () => Promise.resolve(),
      consume: () => Promise.reject(new Error('not used')),
      barrier: () => Promise.resolve(true),
      close: () => Promise.resolve(),
    };
    const trail = createAuditTrail({ queue: slow, clock: new ManualClock() });
    const first = trail.open(entry);
    await vi.waitFor(() => expect(sent).toEqual([1]));
    // Three turns of calls while the first job is on its way: they wait together.
    const later: Promise<unknown>[] = [];
    for (let turn = 0; turn < 3; turn++) {
      later.push(trail.open(entry), trail.update('x', { status: 'completed' }));
      await new Promise((r) => setImmediate(r));
    }
    expect(sent).toEqual([1]);
    landings[0]!();
    await first;
    await vi.waitFor(() => expect(sent).toEqual([1, 6]));
    landings[1]!();
    await Promise.all(later);
  });

  it("hands its groups over: JSON-safe records within the stated size, sharing no object with the caller's", async () => {
    queue = new MemoryJobQueue();
    const enqueued: { data: unknown; handOver?: { chars: number } }[] = [];
    const recording: JobQueue = {
      enqueue: async (_name, data, options) => {
        enqueued.push({ data, handOver: options?.handOver });
      },
      cancel: () => Promise.resolve(),
      consume: () => Promise.reject(new Error('not used')),
      barrier: () => Promise.resolve(true),
      close: () => Promise.resolve(),
    };
    const trail = createAuditTrail({ queue: recording, clock: new ManualClock() });
    const args = { text: 'é'.repeat(500), when: new Date(0), big: 10n, nested: { list: [1, 'two'] } };
    const decidedVia = { carrier: 'push' as const, clientId: null };
    const id = await trail.open({ ...entry, arguments: args });
    await trail.update(id, { status: 'confirmed', confirmedBy: 'u2', decidedVia });
    await trail.update(id, { status: 'completed', result: { out: 'x'.repeat(3000) }, duration: 4 });
    args.nested.list.push(3);
    decidedVia.clientId = 'changed' as never;
    const records = enqueued.flatMap((e) => (e.data as { records: AuditRecordJob[] }).records);
    expect(records).toHaveLength(3);
    for (const { data, handOver } of enqueued) {
      const json = JSON.stringify(data);
      expect(data).toStrictEqual(JSON.parse(json));
      expect(handOver!.chars).toBeGreaterThanOrEqual(json.length);
    }
    const [create, confirmed] = records as [AuditRecordJob & { op: 'create' }, AuditRecordJob & { op: 'update' }];
    expect(create.arguments).toMatchObject({ nested: { list: [1, 'two'] } });
    expect(confirmed.patch.decidedVia).toEqual({ carrier: 'push', clientId: null });
  });

  it('rejects every call of a group whose enqueue fails', async () => {
    queue = new MemoryJobQueue();
    const failing: JobQueue = {
      enqueue: () => Promise.reject(new Error('redis down')),
      cancel: () => Promise.resolve(),
      consume: () => Promise.reject(new Error('not used')),
      barrier: () => Promise.resolve(true),
      close: () => Promise.resolve(),
    };
    const trail = createAuditTrail({ queue: failing, clock: new ManualClock() });
    const results = await Promise.allSettled([trail.open(entry), trail.update('x', { status: 'completed' })]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
