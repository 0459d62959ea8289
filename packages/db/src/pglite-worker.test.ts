import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DbHandle } from './connection.js';
import { isUniqueViolation } from './errors.js';

describe('a file: database (PGlite in a worker thread)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentgw-pglite-worker-'));
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openDatabase({ url: `file:${join(dir, 'pgdata')}` });
    await sql`create table t (id int primary key, at timestamptz, bytes bytea, doc jsonb)`.execute(handle.db);
  }, 120_000);
  afterAll(async () => {
    await handle.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('round-trips dates, bytes and JSON and reports affected rows', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const inserted =
      await sql`insert into t values (1, ${at}, ${new Uint8Array([1, 2, 255])}, ${JSON.stringify({ a: [1, 'x'] })}::jsonb)`.execute(
        handle.db,
      );
    expect(inserted.numAffectedRows).toBe(1n);
    const { rows } = await sql<{
      at: Date;
      bytes: Uint8Array;
      doc: unknown;
    }>`select at, bytes, doc from t where id = 1`.execute(handle.db);
    expect(rows[0]!.at).toEqual(at);
    expect([...rows[0]!.bytes]).toEqual([1, 2, 255]);
    expect(rows[0]!.doc).toEqual({ a: [1, 'x'] });
  });

  it('keeps PostgreSQL error fields (a unique violation is recognised)', async () => {
    const err = await sql`insert into t (id) values (1)`.execute(handle.db).catch((e: unknown) => e);
    expect(isUniqueViolation(err)).toBe(true);
    expect((err as Error).message).toMatch(/duplicate key/);
  });

  it('runs transactions on its one connection: a rollback undoes, a commit keeps', async () => {
    await expect(
      handle.db.transaction().execute(async (trx) => {
        await sql`insert into t (id) values (2)`.execute(trx);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await handle.db.transaction().execute(async (trx) => {
      await sql`insert into t (id) values (3)`.execute(trx);
    });
    const { rows } = await sql<{ id: number }>`select id from t order by id`.execute(handle.db);
    expect(rows.map((r) => r.id)).toEqual([1, 3]);
    expect(await handle.ping()).toBe(true);
  });
});
