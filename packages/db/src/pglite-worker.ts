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

// Plain JavaScript that runs as CommonJS or ESM alike (dynamic imports only), so the worker needs no TypeScript loader.
const WORKER_SOURCE = `
import('node:worker_threads').then(async ({ workerData, parentPort }) => {
  const FIELDS = ['code', 'detail', 'hint', 'constraint', 'table', 'column', 'schema', 'severity', 'position'];
  const plain = (err) => ({ message: err instanceof Error ? err.message : String(err), ...Object.fromEntries(FIELDS.filter((k) => err?.[k] !== undefined).map((k) => [k, err[k]])) });
  const { PGlite } = await import(workerData.pglite);
  const db = new PGlite(workerData.path, { startParams: [...PGlite.defaultStartParams, ...workerData.extraStartParams] });
  try {
    await db.waitReady;
  } catch (err) {
    parentPort.postMessage({ id: 0, error: plain(err) });
    return;
  }
  parentPort.on('message', async ({ id, sql, params, close }) => {
    if (close) {
      await db.close().catch(() => {});
      parentPort.postMessage({ id, rows: [] });
      parentPort.close();
      return;
    }
    try {
      const result = await db.query(sql, params);
      parentPort.postMessage({ id, rows: result.rows, affectedRows: result.affectedRows });
    } catch (err) {
      parentPort.postMessage({ id, error: plain(err) });
    }
  });
  parentPort.postMessage({ id: 0, rows: [] });
});
`;

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

  const send = (message: Record<string, unknown>, id = nextId++): Promise<Reply> =>
    new Promise<Reply>((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
      if (id !== 0) worker.postMessage({ id, ...message });
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
    query: async (sql, params = []) => unwrap(await send({ sql, params })),
    close() {
      closed ??= send({ close: true }).then(
        () => worker.terminate().then(() => undefined),
        () => undefined,
      );
      return closed;
    },
  };
}
