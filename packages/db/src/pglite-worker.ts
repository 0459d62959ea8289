import { Worker } from 'node:worker_threads';

/** What kysely-pglite-dialect calls on its client: `query` and `close`. */
export interface PgliteClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[]; affectedRows?: number }>;
  close(): Promise<void>;
}

type Reply = {
  id: number;
  rows?: unknown[];
  affectedRows?: number;
  error?: Record<string, unknown> & { message: string };
};

/** Statements kept parsed (and planned) in the engine; the least recently used beyond this is closed. */
export const MAX_NAMED_STATEMENTS = 200;

/**
 * A string parameter at least this long crosses to the worker as its UTF-8 bytes, moved instead
 * of copied: Node's structured clone (20 and 24) took ~2.2 ms of the main thread for the 690 KB rows
 * document of an audit batch with 2 KB bodies, encoding and moving it ~0.3 ms (docs/benchmarks.md).
 */
export const BYTES_PARAM_CHARS = 16 * 1024;

// Plain JavaScript that runs as CommonJS or ESM alike (dynamic imports only), so the worker needs no TypeScript loader.
// PGlite's query() sends Parse, Describe, Bind, Describe, Execute and Sync as six trips into the
// engine and parses and plans the text every time. Here a statement with parameters is parsed once
// under a name (its parameter types described then) and later runs as one trip: Bind, Describe,
// Execute, Sync. The engine then keeps its plan as PostgreSQL keeps a prepared statement's (an
// audit batch's upsert cost ~2.7x less, a lookup ~1.7x less). A statement without parameters
// (BEGIN, COMMIT, DDL) goes as one simple Query. Calls run one at a time, in arrival order.
const WORKER_SOURCE = `
import('node:worker_threads').then(async ({ workerData, parentPort }) => {
  const FIELDS = ['code', 'detail', 'hint', 'constraint', 'table', 'column', 'schema', 'severity', 'position'];
  const plain = (err) => ({ message: err instanceof Error ? err.message : String(err), ...Object.fromEntries(FIELDS.filter((k) => err?.[k] !== undefined).map((k) => [k, err[k]])) });
  const { PGlite, protocol, parse } = await import(workerData.pglite);
  const { serialize } = protocol;
  const db = new PGlite(workerData.path, { startParams: [...PGlite.defaultStartParams, ...workerData.extraStartParams] });
  try {
    await db.waitReady;
  } catch (err) {
    parentPort.postMessage({ id: 0, error: plain(err) });
    return;
  }
  const MAX_STATEMENTS = ${MAX_NAMED_STATEMENTS};
  const named = new Map();
  let nextName = 0;
  const frames = (...parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) { out.set(p, at); at += p.length; }
    return out;
  };
  const resultOf = (messages) => {
    const results = parse.parseResults(messages, db.parsers);
    const last = results[results.length - 1] ?? { rows: [] };
    return { rows: last.rows, affectedRows: last.affectedRows };
  };
  const prepared = async (sql) => {
    let statement = named.get(sql);
    if (statement) {
      named.delete(sql);
      named.set(sql, statement);
      return statement;
    }
    const name = 'agentgw_' + ++nextName;
    const described = await db.execProtocol(frames(serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()));
    statement = { name, types: parse.parseDescribeStatementResults(described.messages) };
    named.set(sql, statement);
    if (named.size > MAX_STATEMENTS) {
      const [oldest, { name: dropped }] = named.entries().next().value;
      named.delete(oldest);
      await db.execProtocol(frames(serialize.close({ type: 'S', name: dropped }), serialize.sync()));
    }
    return statement;
  };
  const value = (v, type) => (v === null || v === undefined ? null : (db.serializers[type] ?? String)(v));
  // A string sent as UTF-8 bytes goes to the engine as they are, in binary format, where that
  // format is the text itself (text, varchar, json); for any other type it is a string again.
  const TEXT_AS_BINARY = new Set([25, 1043, 114]);
  const decoder = new TextDecoder();
  const fromBytes = (bytes, type) => (TEXT_AS_BINARY.has(type) ? bytes : value(decoder.decode(bytes), type));
  const BYTEA = 17;
  // Describe (the unnamed portal), Execute (every row) and Sync, which follow every Bind.
  const AFTER_BIND = [68, 0, 0, 0, 6, 80, 0, 69, 0, 0, 0, 9, 0, 0, 0, 0, 0, 83, 0, 0, 0, 4];
  // Bind and AFTER_BIND in one buffer sized once, each value written into it once (byte arrays in
  // binary format, the rest as text; the only bytes here are fromBytes' and the caller's
  // Uint8Arrays, every other value is a serialiser's string): PGlite's serializer grows, slices and
  // copies its buffers per value and per message, five copies of an audit batch's 690 KB rows
  // document (docs/benchmarks.md).
  const bindMessage = (statement, values) => {
    const parts = values.map((v) => (v === null || v instanceof Uint8Array ? v : String(v)));
    let length = 4 + 1 + Buffer.byteLength(statement) + 1 + 2 + 2 * parts.length + 2 + 2;
    for (const p of parts) length += 4 + (p === null ? 0 : typeof p === 'string' ? Buffer.byteLength(p) : p.byteLength);
    const out = Buffer.allocUnsafeSlow(1 + length + AFTER_BIND.length);
    let at = out.writeUInt8(66, 0);
    at = out.writeInt32BE(length, at);
    at = out.writeUInt8(0, at);
    at += out.write(statement, at);
    at = out.writeUInt8(0, at);
    at = out.writeUInt16BE(parts.length, at);
    for (const p of parts) at = out.writeInt16BE(p instanceof Uint8Array ? 1 : 0, at);
    at = out.writeUInt16BE(parts.length, at);
    for (const p of parts) {
      if (p === null) at = out.writeInt32BE(-1, at);
      else if (typeof p === 'string') {
        const n = out.write(p, at + 4);
        at = out.writeInt32BE(n, at) + n;
      } else {
        at = out.writeInt32BE(p.byteLength, at);
        out.set(p, at);
        at += p.byteLength;
      }
    }
    at = out.writeInt16BE(0, at);
    out.set(AFTER_BIND, at);
    return out;
  };
  const execute = async (sql, params, utf8) => {
    const { name, types } = await prepared(sql);
    const values = params.map((v, i) => {
      if (utf8.includes(i)) return fromBytes(v, types[i]);
      // Bytes for any type but bytea are that type's binary format, as node-postgres sends them.
      if (v instanceof Uint8Array && types[i] !== BYTEA) return v;
      return value(v, types[i]);
    });
    return resultOf((await db.execProtocol(bindMessage(name, values))).messages);
  };
  const run = async (sql, params, utf8) => {
    if (params.length === 0) return resultOf((await db.execProtocol(serialize.query(sql))).messages);
    try {
      return await execute(sql, params, utf8);
    } catch (err) {
      // A table changed under a kept statement (a migration): parse it again, once.
      if (err?.code !== '0A000' || !named.has(sql)) throw err;
      named.delete(sql);
      return execute(sql, params, utf8);
    }
  };
  let queue = Promise.resolve();
  parentPort.on('message', ({ id, sql, params, utf8, close }) => {
    queue = queue.then(async () => {
      if (close) {
        await db.close().catch(() => {});
        parentPort.postMessage({ id, rows: [] });
        parentPort.close();
        return;
      }
      try {
        const result = await run(sql, params, utf8);
        parentPort.postMessage({ id, rows: result.rows, affectedRows: result.affectedRows });
      } catch (err) {
        parentPort.postMessage({ id, error: plain(err) });
      }
    });
  });
  parentPort.postMessage({ id: 0, rows: [] });
});
`;

const encoder = new TextEncoder();

/** Bytes that own their whole buffer can be moved (a shared one would be cut from its other users). */
const movable = (bytes: Uint8Array, transfer: ArrayBuffer[]): void => {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength)
    transfer.push(bytes.buffer as ArrayBuffer);
};

/**
 * A query's parameters as they cross to the worker, by index: long strings as UTF-8 bytes, moved,
 * not copied (a caller's own bytes are copied: it may use them again).
 */
function crossing(params: readonly unknown[]): { values: unknown[]; utf8: number[]; transfer: ArrayBuffer[] } {
  const utf8: number[] = [];
  const transfer: ArrayBuffer[] = [];
  const values = params.map((v, i) => {
    if (typeof v !== 'string' || v.length < BYTES_PARAM_CHARS) return v;
    const bytes = encoder.encode(v);
    utf8.push(i);
    movable(bytes, transfer);
    return bytes;
  });
  return { values, utf8, transfer };
}

/**
 * The worker's JavaScript only relays queries and rows, so a small young generation is enough:
 * V8's default (up to 48 MB) grows while the engine starts and stays, ~8 MB more resident at idle
 * (apps/gateway/README.md, "Memory").
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 3 };

/**
 * The embedded database in a worker thread: PGlite runs its WebAssembly synchronously, so on
 * the main thread every query (the audit writer's batches above all) stalled HTTP traffic for
 * its whole duration. Queries and answers cross a message channel (structured clone: Dates,
 * byte arrays and JSON values survive); errors keep PostgreSQL's fields (`code` for
 * `isUniqueViolation`). The worker keeps the process alive only while a query is in flight,
 * as PGlite on the main thread did. `extraStartParams` follow PGlite's default start parameters.
 */
export async function openPgliteInWorker(options: {
  pglite: string;
  path: string;
  extraStartParams: string[];
}): Promise<PgliteClient> {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: options, resourceLimits: WORKER_LIMITS });
  const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (err: Error) => void }>();
  let nextId = 1;
  const failAll = (err: Error) => {
    for (const waiter of pending.values()) waiter.reject(err);
    pending.clear();
  };
  worker.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    waiter.resolve(reply);
  });
  worker.on('error', (err) => failAll(err));
  worker.on('exit', () => failAll(new Error('the embedded database worker has stopped')));

  const send = (message: Record<string, unknown>, id = nextId++, transfer: ArrayBuffer[] = []): Promise<Reply> =>
    new Promise<Reply>((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
      if (id !== 0) worker.postMessage({ id, ...message }, transfer);
    });
  const unwrap = (reply: Reply) => {
    if (reply.error) throw Object.assign(new Error(reply.error.message), reply.error);
    return {
      rows: reply.rows ?? [],
      ...(reply.affectedRows === undefined ? {} : { affectedRows: reply.affectedRows }),
    };
  };

  unwrap(await send({}, 0)); // ready (or the start-up error)
  let closed: Promise<void> | undefined;
  return {
    query: async (sql, params = []) => {
      const { values, utf8, transfer } = crossing(params);
      return unwrap(await send({ sql, params: values, utf8 }, nextId++, transfer));
    },
    close() {
      closed ??= send({ close: true }).then(
        () => worker.terminate().then(() => undefined),
        () => undefined,
      );
      return closed;
    },
  };
}
