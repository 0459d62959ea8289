import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DbHandle } from './connection.js';
import { isUniqueViolation } from './errors.js';
import { BYTES_PARAM_CHARS } from './pglite-worker.js';
import { textArrayBytes } from './text-array-bytes.js';

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

  it('binds every kind of parameter: nulls, multi-byte and lone-surrogate text, bytes, long bytes, many values (past 32,767)', async () => {
    // The worker writes each Bind message itself (lengths in UTF-8 bytes, byte arrays in binary format).
    const texts = ['', 'a', 'é€😀', 'x\uD800y', '"quoted" \\ ', 'ü'.repeat(5_000)];
    const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => i % 251);
    const { rows } = await sql<Record<string, unknown>>`select ${null}::text as none, ${texts[0]}::text as t0,
        ${texts[1]}::text as t1, ${texts[2]}::text as t2, ${texts[3]}::text as t3, ${texts[4]}::text as t4,
        ${texts[5]}::text as t5, octet_length(${texts[5]}::text) as t5bytes, ${bytes}::bytea as b,
        ${42}::int as n, ${true}::boolean as yes`.execute(handle.db);
    expect(rows[0]).toMatchObject({
      none: null,
      t0: '',
      t1: 'a',
      t2: 'é€😀',
      t3: 'x\uFFFDy',
      t4: texts[4],
      t5: texts[5],
    });
    expect(rows[0]).toMatchObject({ t5bytes: 10_000, n: 42, yes: true });
    expect(Buffer.from(rows[0]!.b as Uint8Array).equals(Buffer.from(bytes))).toBe(true);
    const many = Array.from({ length: 300 }, (_, i) => `v${i}`);
    const listed = await sql<{ all: string[] }>`select array[${sql.join(many)}]::text[] as "all"`.execute(handle.db);
    expect(listed.rows[0]!.all).toEqual(many);
    // The protocol's parameter count is unsigned: past 32,767 values a statement still binds.
    const past = Array.from({ length: 40_000 }, (_, i) => i);
    const counted = await sql<{ n: number }>`select cardinality(array[${sql.join(past)}]::int[]) as n`.execute(
      handle.db,
    );
    expect(counted.rows[0]!.n).toBe(40_000);
  });

  it('takes a long text parameter as it is, whatever the type it is for', async () => {
    // Past BYTES_PARAM_CHARS a string crosses to the worker as UTF-8 bytes: the engine must still
    // see the same text, for a text, json or jsonb parameter and for one it converts.
    const text = 'é€😀 "quoted" \\ '.repeat(2_000) + 'end';
    expect(text.length).toBeGreaterThan(BYTES_PARAM_CHARS);
    const doc = JSON.stringify({ text, n: [1, 2, 3] });
    const { rows } = await sql<{
      same: boolean;
      chars: number;
      fromJson: string;
      fromJsonb: string;
      n: number;
    }>`select ${text}::text = ${text} as same, length(${text}) as chars,
        ${doc}::json ->> 'text' as "fromJson", ${doc}::jsonb ->> 'text' as "fromJsonb",
        jsonb_array_length(${doc}::text::jsonb -> 'n') as n`.execute(handle.db);
    expect(rows[0]).toEqual({ same: true, chars: [...text].length, fromJson: text, fromJsonb: text, n: 3 });
    // A type that parses the text: a long number.
    const digits = '1'.repeat(BYTES_PARAM_CHARS);
    const numeric = await sql<{ ok: boolean }>`select ${digits}::numeric = ${digits}::numeric as ok`.execute(handle.db);
    expect(numeric.rows[0]!.ok).toBe(true);
    // A text the engine refuses is refused as before, and the connection goes on.
    const nul = 'x'.repeat(BYTES_PARAM_CHARS) + '\u0000';
    await expect(sql`select ${nul}::text`.execute(handle.db)).rejects.toThrow(/0x00/);
    expect(await handle.ping()).toBe(true);
  });

  it("takes an array of strings in text[]'s binary format (textArrayBytes), and plain arrays through PGlite's serialisers", async () => {
    // The encoded bytes go as text[]'s binary format (as node-postgres sends a Buffer): elements,
    // nulls and the string 'NULL' must come out as they went in.
    const items = ['', 'a', 'é€😀', '"quoted" \\ {a,b}', null, 'NULL', ' spaced ', 'ü'.repeat(10_000)];
    const bytes = textArrayBytes(items);
    const { rows } = await sql<{ same: string[]; n: number; second: string; empty: number; none: boolean }>`select
        ${bytes}::text[] as same, cardinality(${bytes}::text[]) as n, (${bytes}::text[])[2] as second,
        cardinality(${textArrayBytes([])}::text[]) as empty, ${textArrayBytes([])}::text[] = '{}' as none`.execute(
      handle.db,
    );
    expect(rows[0]).toEqual({ same: items, n: items.length, second: 'a', empty: 0, none: true });
    // The encoding is byte for byte the one the engine itself sends (array_send).
    for (const sent of [items, [], ['only']]) {
      const own = await sql<{ bytes: Uint8Array }>`select array_send(${sent}::text[]) as bytes`.execute(handle.db);
      expect(Buffer.from(own.rows[0]!.bytes).equals(Buffer.from(textArrayBytes(sent)))).toBe(true);
    }
    const zipped = await sql<{
      a: string | null;
      b: string | null;
    }>`select * from unnest(${textArrayBytes(['x', null])}::text[], ${textArrayBytes(['y'])}::text[]) as t(a, b)`.execute(
      handle.db,
    );
    expect(zipped.rows).toEqual([
      { a: 'x', b: 'y' },
      { a: null, b: null },
    ]);
    // A hole (or undefined) is NULL, as node-postgres takes it.
    const sparse: (string | null)[] = ['a'];
    sparse[2] = 'c';
    const holes = await sql<{ t: (string | null)[] }>`select ${textArrayBytes(sparse)}::text[] as t`.execute(handle.db);
    expect(holes.rows[0]!.t).toEqual(['a', null, 'c']);
    // Text the engine refuses in a text parameter is refused in the array too; a lone surrogate
    // becomes U+FFFD as it does there, and the connection goes on.
    const surrogate = await sql<{ t: string[] }>`select ${textArrayBytes(['x\uD800y'])}::text[] as t`.execute(
      handle.db,
    );
    expect(surrogate.rows[0]!.t).toEqual(['x\uFFFDy']);
    await expect(sql`select ${textArrayBytes(['a\u0000b'])}::text[]`.execute(handle.db)).rejects.toThrow(/0x00/);
    // Plain arrays, of strings or not, still go through PGlite's serialisers for every type.
    const id = '7d0f4b1e-3c2a-4b5d-9e8f-0a1b2c3d4e5f';
    const other = await sql<{ t: string[]; v: string[]; hit: boolean; j: unknown; n: number[] }>`select
        ${['a', '"b" \\ {c}', 'NULL']}::text[] as t, ${['a', 'b,c']}::varchar[] as v,
        ${id}::uuid = any(${[id]}::uuid[]) as hit, ${['x', '"y"']}::jsonb as j, ${[1, 2]}::int[] as n`.execute(
      handle.db,
    );
    expect(other.rows[0]).toEqual({
      t: ['a', '"b" \\ {c}', 'NULL'],
      v: ['a', 'b,c'],
      hit: true,
      j: ['x', '"y"'],
      n: [1, 2],
    });
    expect(await handle.ping()).toBe(true);
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

  it('plans a kept statement for each run, never keeping a generic plan made while the table was small', async () => {
    // The audit writer's duplicate check, kept parsed under a name: PostgreSQL switches a prepared
    // statement to a generic plan after five runs, and one made while audit_chain held a few
    // hundred rows (a sequential scan) was kept for every batch after, the table growing to
    // millions of rows. The embedded engine runs with plan_cache_mode=force_custom_plan.
    await sql`create table grows (k text primary key)`.execute(handle.db);
    // A batch's keys: more than the 10 array elements a generic plan assumes.
    const batch = (i: number) => Array.from({ length: 60 }, (_, j) => `k-${i}-${j}`);
    for (let i = 0; i < 10; i++) {
      await sql`insert into grows select unnest(${batch(i)}::text[])`.execute(handle.db);
      await sql`select k from grows where k = any(${batch(i)}::text[])`.execute(handle.db);
    }
    const { rows } = await sql<{ generic: number; custom: number }>`
      select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
      where statement like 'select k from grows where k = any%'`.execute(handle.db);
    expect(rows).toEqual([{ generic: 0, custom: 10 }]);
  });
});
