import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { migrateToLatest, openDatabase, type DbHandle } from '@agentgw/db';
import { migrateDownTo, openTestDatabase, testBackends } from '@agentgw/db/testing';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeBatch } from './batch-writer.js';
import { CONTENT_SQL } from './chain.js';
import { validJob, writeChainFixture } from './chain.fixtures.js';
import { pruneAudit } from './retention.js';
import { verifyAll, verifyChain } from './verify.js';

describe.each(testBackends())('verify on %s', (backend) => {
  let handle: DbHandle;
  let ids: string[];
  beforeEach(async () => {
    handle = await openTestDatabase(backend);
    ids = await writeChainFixture(handle.db, 30);
  });
  afterEach(() => handle.close());

  it('passes on chains written by the writer: two links per row, one chain per tenant', async () => {
    const reports = await verifyAll(handle.db);
    expect(reports.map((r) => [r.tenantKey, r.links, r.broken])).toEqual([
      ['', 20, undefined],
      ['t-a', 20, undefined],
      ['t-b', 20, undefined],
    ]);
  });

  it("hashes a row's content as sha256() in SQL does, so chains hashed by the database before still verify", async () => {
    // Text beyond ASCII in every form the row carries it: names, arguments, result, error.
    const odd = 'Zoë — 東京 🚀 \u00a0nbsp, "quoted", back\\slash, tab\t, combining é';
    await writeBatch(handle.db, [
      validJob({
        op: 'create',
        id: 'rec-unicode',
        key: 'c:rec-unicode',
        seq: 1,
        at: new Date(Date.UTC(2026, 0, 3)).toISOString(),
        userId: odd,
        agentId: 'ag',
        endUserId: null,
        providerId: 'p',
        tenantId: 't-a',
        toolName: 'fs.read',
        arguments: { [odd]: [odd, 1.5, null, true] },
        status: 'failed',
        error: odd,
      }),
    ]);
    const { rows } = await sql<{ audit_id: string; content_hash: string; in_sql: string }>`
      with hashed as (select id, encode(sha256(convert_to(${CONTENT_SQL}, 'UTF8')), 'hex') as in_sql from audit_logs)
      select c.audit_id, c.content_hash, hashed.in_sql from audit_chain c join hashed on hashed.id = c.audit_id
      where c.seq = (select max(seq) from audit_chain l where l.audit_id = c.audit_id)`.execute(handle.db);
    expect(rows).toHaveLength(31);
    for (const row of rows) expect(row.content_hash, row.audit_id).toBe(row.in_sql);
    expect((await verifyChain(handle.db, 't-a')).broken).toBeUndefined();
  });

  it('keeps verifying rows hashed while bodies were jsonb (0018): the migrated row renders the text it was hashed over', async () => {
    await migrateDownTo(handle.db, '0017_audit_decided_via');
    // A row as 0017's writer left it, hashed over jsonb_build_array, with bodies whose jsonb text
    // is not what was sent (key order, a duplicate key, spacing, number forms, text beyond ASCII).
    const args = '{"z":1,"a":[1.50,1e2,"Zoë 🚀 \\"q\\" \\u00e9"],"a":{"y":null,"b":[]}}';
    await sql`insert into audit_logs (id, tenant_id, tool_name, arguments, result, status, duration, error, created_at, updated_at)
      values ('old-1', 't-old', 'fs.read', ${args}::jsonb, '"just text"'::jsonb, 'failed', 12, 'tab\tquote"', now(), now())`.execute(
      handle.db,
    );
    const jsonbText = sql<string>`jsonb_build_array(id, tenant_id, user_id, agent_id, end_user_id, provider_id, tool_name, arguments,
      result, status, duration, confirmed_by, error, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
      to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'))::text`;
    const before = await sql<{
      content: string;
    }>`select ${jsonbText} as content from audit_logs where id = 'old-1'`.execute(handle.db);
    await migrateToLatest(handle.db);
    const after = await handle.db
      .selectFrom('audit_logs')
      .select(['arguments', CONTENT_SQL.as('content')])
      .where('id', '=', 'old-1')
      .executeTakeFirstOrThrow();
    expect(after.content).toBe(before.rows[0]!.content);
    expect(after.content).toContain('{"a": {"b": [], "y": null}, "z": 1}');
    expect(after.arguments).toEqual({ a: { b: [], y: null }, z: 1 });

    // The writer's next write of the row hashes its text as it stands: the chain verifies.
    await writeBatch(handle.db, [
      validJob({
        op: 'update',
        id: 'old-1',
        key: 'u:old-1',
        seq: 9,
        at: new Date().toISOString(),
        patch: { duration: 7 },
      }),
    ]);
    expect(await verifyChain(handle.db, 't-old')).toEqual({ tenantKey: 't-old', links: 1 });
  });

  it('hashes a body as the text the writer sent: a body rewritten in SQL to the same value in another form is a change', async () => {
    const [row] = await sql<{ id: string; arguments: string }>`select id, arguments::text from audit_logs
      where tenant_id = 't-a' and arguments is not null order by id limit 1`
      .execute(handle.db)
      .then((r) => r.rows);
    expect(row!.arguments).not.toContain(': ');
    // Same JSON value, jsonb's spacing: what a jsonb column would have stored.
    await sql`update audit_logs set arguments = arguments::jsonb::json where id = ${row!.id}`.execute(handle.db);
    expect((await verifyChain(handle.db, 't-a')).broken).toMatchObject({
      auditId: row!.id,
      reason: expect.stringContaining('changed after it was written'),
    });
  });

  it('names a row whose content was edited by hand in SQL', async () => {
    await sql`update audit_logs set result = '{"ok": 999}'::jsonb where id = ${ids[12]!}`.execute(handle.db);
    const report = await verifyChain(handle.db, 't-a');
    expect(report.broken).toMatchObject({
      tenantKey: 't-a',
      auditId: ids[12],
      reason: expect.stringContaining('changed after it was written'),
    });
    // The other chains are intact.
    expect((await verifyChain(handle.db, 't-b')).broken).toBeUndefined();
  });

  it('names a row moved to another tenant by hand', async () => {
    await sql`update audit_logs set tenant_id = 't-b' where id = ${ids[0]!}`.execute(handle.db);
    expect((await verifyChain(handle.db, 't-a')).broken).toMatchObject({
      auditId: ids[0],
      reason: expect.stringContaining('changed'),
    });
  });

  it('names a row deleted by hand, and one inserted by hand', async () => {
    await sql`delete from audit_logs where id = ${ids[4]!}`.execute(handle.db);
    expect((await verifyChain(handle.db, 't-b')).broken).toMatchObject({
      auditId: ids[4],
      reason: expect.stringContaining('missing'),
    });
    await sql`insert into audit_logs (id, tool_name, status, tenant_id) values ('forged', 'fs.read', 'completed', 't-a')`.execute(
      handle.db,
    );
    expect((await verifyChain(handle.db, 't-a')).broken).toMatchObject({
      auditId: 'forged',
      reason: expect.stringContaining('no chain'),
    });
  });

  it('names the row of an altered or removed link', async () => {
    const [link] = await handle.db
      .selectFrom('audit_chain')
      .selectAll()
      .where('tenant_key', '=', 't-a')
      .where('seq', '=', 5)
      .execute();
    await sql`update audit_chain set content_hash = ${'f'.repeat(64)} where tenant_key = 't-a' and seq = 5`.execute(
      handle.db,
    );
    expect((await verifyChain(handle.db, 't-a')).broken).toMatchObject({
      seq: 5,
      auditId: link!.audit_id,
      reason: expect.stringContaining('altered'),
    });
    await sql`delete from audit_chain where tenant_key = 't-b' and seq = 3`.execute(handle.db);
    expect((await verifyChain(handle.db, 't-b')).broken).toMatchObject({
      seq: 4,
      reason: expect.stringContaining('link 3 is missing'),
    });
    // Cutting the tail: the row of the last link no longer matches its remaining (earlier) link.
    const tail = await handle.db
      .selectFrom('audit_chain')
      .select('audit_id')
      .where('tenant_key', '=', '')
      .where('seq', '=', 20)
      .executeTakeFirstOrThrow();
    await sql`delete from audit_chain where tenant_key = '' and seq = 20`.execute(handle.db);
    expect((await verifyChain(handle.db, '')).broken).toMatchObject({
      auditId: tail.audit_id,
      reason: expect.stringContaining('changed'),
    });
  });

  it('still passes after retention pruned the oldest links, and still catches an edit after that', async () => {
    // Age the first 12 links of t-a (rows 0..15 step 3 are t-a; their creates come first).
    await sql`update audit_chain set created_at = now() - interval '40 days' where tenant_key = 't-a' and seq <= 12`.execute(
      handle.db,
    );
    const outcome = await pruneAudit(handle.db, new Date(Date.now() - 30 * 86_400_000));
    // Those are the 10 creates of t-a plus 2 completions: only rows whose every link went are deleted.
    expect(outcome).toEqual({ rows: 2, links: 12, placeholders: 0 });
    const remaining = await handle.db.selectFrom('audit_logs').select('id').where('tenant_id', '=', 't-a').execute();
    expect(remaining).toHaveLength(8);
    expect(await verifyChain(handle.db, 't-a')).toEqual({ tenantKey: 't-a', links: 8 });
    const victim = remaining[3]!.id;
    await sql`update audit_logs set status = 'failed' where id = ${victim}`.execute(handle.db);
    expect((await verifyChain(handle.db, 't-a')).broken).toMatchObject({ auditId: victim });
  });
});

describe('verify command', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'audit-verify-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (args: string[]) => {
    try {
      const { stdout } = await promisify(execFile)('pnpm', ['exec', 'tsx', 'src/verify.cli.ts', ...args], {
        env: { ...process.env, DATABASE_URL: `file:${dir}` },
      });
      return { code: 0, stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, stdout: e.stdout };
    }
  };
  const withDb = async (fn: (h: DbHandle) => Promise<void>) => {
    const h = await openDatabase({ url: `file:${dir}` });
    try {
      await fn(h);
    } finally {
      await h.close();
    }
  };

  // Four processes on a file database created here (initdb): the bound catches a hang, not a busy machine.
  it('passes, then fails naming a row edited by hand in SQL', async () => {
    let ids: string[] = [];
    await withDb(async (h) => {
      await migrateToLatest(h.db);
      ids = await writeChainFixture(h.db, 9);
    });
    const ok = await run([]);
    expect(ok).toEqual({
      code: 0,
      stdout: "audit chain (no tenant): ok, 6 links\naudit chain 't-a': ok, 6 links\naudit chain 't-b': ok, 6 links\n",
    });
    await withDb(async (h) => {
      await sql`update audit_logs set arguments = '{"i": 42}'::jsonb where id = ${ids[3]!}`.execute(h.db);
    });
    const broken = await run(['--tenant', 't-a']);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(
      new RegExp(`^audit chain 't-a': BROKEN at link \\d+: row ${ids[3]}: row was changed after it was written`),
    );
    expect((await run(['--tenant', 't-b'])).code).toBe(0);
  }, 600_000);
});
