import type { AuditRecordJob } from '@agentgw/core';
import { testBackends, openTestDatabase } from '@agentgw/db/testing';
import type { DbHandle } from '@agentgw/db';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeBatch } from './batch-writer.js';
import { verifyAll } from './verify.js';
import { validJob as valid } from './chain.fixtures.js';

type UpdateJob = Extract<AuditRecordJob, { op: 'update' }>;

const create = (id: string): AuditRecordJob => ({
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
  arguments: { path: '/x' },
  status: 'pending',
});
const update = (id: string, n: number, patch: UpdateJob['patch'], key = `u:${id}:${n}`): AuditRecordJob => ({
  op: 'update',
  id,
  key,
  seq: n + 1,
  at: `2026-01-01T10:00:0${n}.000Z`,
  patch,
});

/** Every ordering of a list (small lists only). */
const permutations = <T>(items: T[]): T[][] =>
  items.length <= 1
    ? [items]
    : items.flatMap((x, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((p) => [x, ...p]));

describe.each(testBackends())('writeBatch on %s', (backend) => {
  let handle: DbHandle;
  beforeEach(async () => {
    handle = await openTestDatabase(backend);
  });
  afterEach(() => handle.close());

  const row = (id: string) => handle.db.selectFrom('audit_logs').selectAll().where('id', '=', id).executeTakeFirst();
  const count = async (table: 'audit_logs' | 'audit_chain') =>
    Number(
      (
        await handle.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('writes a job delivered twice (in one batch and again later) as one row and one link', async () => {
    const job = valid(create('r1'));
    expect(await writeBatch(handle.db, [job, job])).toMatchObject({ rows: 1, links: 1, duplicates: 1 });
    expect(await writeBatch(handle.db, [job])).toMatchObject({ rows: 0, links: 0, duplicates: 1 });
    expect(await count('audit_logs')).toBe(1);
    expect(await count('audit_chain')).toBe(1);
    expect(await row('r1')).toMatchObject({
      tool_name: 'fs.read',
      tenant_id: 't1',
      arguments: { path: '/x' },
      status: 'pending',
    });
  });

  it('stores each body as the JSON text of what it was sent, beside its row, and chains it verifiably', async () => {
    // Bodies travel beside the rows document as text arrays (zipped by position): each must land
    // on its own row, as the text JSON.stringify gives it, with none (or JSON null) as NULL.
    const bodies: unknown[] = [
      { q: '"quoted" \\ {a,b} NULL', nested: [1, 1.5, -0, true, null, { '': 'é€😀' }] },
      'a string body',
      42,
      [],
      { nul: 'a\u0000b', control: '\n\t\u0001' },
      null,
    ];
    const jobs = bodies.flatMap((body, i) => [
      valid({ ...create(`b${i}`), arguments: body }),
      valid(update(`b${i}`, 1, { status: 'completed', result: i % 2 === 0 ? { echoed: body } : body, duration: i })),
    ]);
    expect(await writeBatch(handle.db, jobs)).toMatchObject({ rows: bodies.length, links: bodies.length * 2 });
    const stored = await handle.db
      .selectFrom('audit_logs')
      .select(['id', sql<string | null>`arguments::text`.as('args'), sql<string | null>`result::text`.as('res')])
      .orderBy('id')
      .execute();
    expect(stored).toEqual(
      bodies.map((body, i) => {
        const result = i % 2 === 0 ? { echoed: body } : body;
        return {
          id: `b${i}`,
          args: body === null ? null : JSON.stringify(body),
          res: result === null ? null : JSON.stringify(result),
        };
      }),
    );
    expect((await verifyAll(handle.db)).filter((r) => r.broken !== undefined)).toEqual([]);
  });

  it('leaves a row as it was when a job written before is delivered again (the attempt that hit its key is rolled back)', async () => {
    const job = valid(create('r3'));
    await writeBatch(handle.db, [job]);
    const before = await row('r3');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await writeBatch(handle.db, [job])).toMatchObject({ rows: 0, links: 0, duplicates: 1 });
    expect(await row('r3')).toEqual(before);
  });

  it('writes the new jobs of a batch that also carries a redelivered one', async () => {
    const old = valid(create('r4'));
    await writeBatch(handle.db, [old]);
    const done = valid(update('r4', 2, { status: 'completed', result: { ok: 2 }, duration: 9 }));
    expect(await writeBatch(handle.db, [old, done, valid(create('r5'))])).toMatchObject({
      rows: 2,
      links: 2,
      duplicates: 1,
    });
    expect(await count('audit_chain')).toBe(3);
    expect(await row('r4')).toMatchObject({ status: 'completed', result: { ok: 2 }, duration: 9 });
    expect(await row('r5')).toMatchObject({ status: 'pending' });
  });

  it('looks job keys up only after a batch met one written before', async () => {
    const statements: string[] = [];
    const logged = handle.db.withPlugin({
      transformQuery: (args) => {
        if (args.node.kind === 'RawNode') statements.push(args.node.sqlFragments.join('?'));
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const lookups = () => statements.filter((text) => text.includes('select job_key from audit_chain')).length;
    await writeBatch(logged, [valid(create('r6')), valid(create('r7'))]);
    expect(statements.length).toBeGreaterThan(0);
    expect(lookups()).toBe(0);
    await writeBatch(logged, [valid(create('r6'))]);
    expect(lookups()).toBe(1);
  });

  it('writes a refusal opened with its reason (one create job carrying error)', async () => {
    await writeBatch(handle.db, [
      valid(Object.assign(create('r9'), { status: 'rejected' as const, error: 'Denied by an access rule' })),
    ]);
    expect(await row('r9')).toMatchObject({ status: 'rejected', error: 'Denied by an access rule' });
  });

  it('writes a call whose create carries its outcome (taken in by the producer) as one row and one link', async () => {
    const ended = Object.assign(create('r8'), { status: 'completed' as const, result: { ok: 1 }, duration: 7 });
    expect(await writeBatch(handle.db, [valid(ended)])).toMatchObject({ rows: 1, links: 1 });
    expect(await row('r8')).toMatchObject({
      status: 'completed',
      result: { ok: 1 },
      duration: 7,
      arguments: { path: '/x' },
    });
    // A later update still follows the merge rule (a rejected stage wins).
    await writeBatch(handle.db, [valid(update('r8', 5, { status: 'rejected', error: 'late refusal' }))]);
    expect(await row('r8')).toMatchObject({ status: 'rejected', result: { ok: 1 }, duration: 7 });
  });

  it('keeps an update that arrives before its create as a placeholder, completed by the create', async () => {
    const done = valid(update('r2', 3, { status: 'completed', result: { ok: 1 }, duration: 40 }));
    expect(await writeBatch(handle.db, [done])).toMatchObject({ rows: 1, placeholders: 1, links: 0 });
    expect(await row('r2')).toMatchObject({ tool_name: null, status: 'completed' });
    expect(await writeBatch(handle.db, [valid(create('r2'))])).toMatchObject({ rows: 1, placeholders: 0, links: 1 });
    expect(await row('r2')).toMatchObject({
      tool_name: 'fs.read',
      user_id: 'u1',
      tenant_id: 't1',
      arguments: { path: '/x' },
      status: 'completed',
      result: { ok: 1 },
      duration: 40,
      created_at: new Date('2026-01-01T10:00:00.000Z'),
    });
  });

  it('ends in the same row whatever the order and batching of create, confirm and complete', async () => {
    const jobs = [
      create('r3'),
      update('r3', 1, {
        status: 'confirmed',
        confirmedBy: 'admin-1',
        decidedVia: { carrier: 'client', clientId: 'app-1' },
      }),
      update('r3', 2, { status: 'completed', result: { n: 2 }, duration: 7, error: null }),
      // A late, older duplicate-ish result must not win over the newer one.
      update('r3', 1, { result: { n: 1 } }, 'u:r3:early'),
    ].map(valid);
    const outcomes = new Set<string>();
    for (const [i, order] of permutations(jobs).entries()) {
      const id = `r3-${i}`;
      const renamed = order.map((j) => ({ job: { ...j.job, id }, key: `${j.key}:${i}` }));
      // Alternate between one batch and one job per batch.
      if (i % 2 === 0) await writeBatch(handle.db, renamed);
      else for (const j of renamed) await writeBatch(handle.db, [j]);
      const r = await row(id);
      outcomes.add(
        JSON.stringify([
          r?.tool_name,
          r?.status,
          r?.confirmed_by,
          r?.decided_via,
          r?.decided_client_id,
          r?.result,
          r?.duration,
          r?.error,
          r?.created_at,
        ]),
      );
    }
    expect([...outcomes]).toEqual([
      JSON.stringify([
        'fs.read',
        'completed',
        'admin-1',
        'client',
        'app-1',
        { n: 2 },
        7,
        null,
        new Date('2026-01-01T10:00:00.000Z'),
      ]),
    ]);
  });

  it('never lets a later stage be overtaken by an earlier status sent later', async () => {
    await writeBatch(handle.db, [valid(create('r4')), valid(update('r4', 2, { status: 'completed' }))]);
    await writeBatch(handle.db, [valid(update('r4', 5, { status: 'pending' }))]);
    expect((await row('r4'))?.status).toBe('completed');
  });

  it('keeps a rejected record rejected: a later completed or failed (a runtime completing its refused call) does not overwrite it', async () => {
    await writeBatch(handle.db, [valid(create('r5')), valid(update('r5', 2, { status: 'rejected' }))]);
    await writeBatch(handle.db, [valid(update('r5', 5, { status: 'completed' }))]);
    await writeBatch(handle.db, [
      valid(update('r5', 6, { status: 'failed' })),
      valid(update('r5', 7, { status: 'completed' })),
    ]);
    expect((await row('r5'))?.status).toBe('rejected');
  });
});
