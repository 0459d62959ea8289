/**
 * `pnpm --filter @agentgw/audit-writer bench:outcome`: the all-in-one's audit path for forwarded
 * tool calls — trail, in-process queue, writer, embedded database in its worker — with each
 * call's create sent at once (`now`, two records per call) and waiting for its outcome
 * (`with-outcome`, one record), alternated in rounds in one process. Prints CPU-ms per 1,000
 * calls of the whole process (every thread: the database worker's included). Measured, not
 * asserted. BENCH_CALLS (default 4000 per round), BENCH_ROUNDS (default 3), BENCH_RESULT_BYTES (the
 * length of each call's result text, JSON of records; default 5: 'hello'), 16 calls at a time. Run it as the all-in-one runs its
 * engine with `node --liftoff-only --import tsx bench/outcome-merge.bench.ts`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuditTrail, type OpenTiming } from '@agentgw/audit';
import { MemoryJobQueue, silentLogger, systemClock } from '@agentgw/core';
import { migrateToLatest, openDatabase } from '@agentgw/db';
import { AUDIT_QUEUES, createAuditConsumer } from '../src/audit-consumer.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const AT_ONCE = 16;
// A result's text as MCP servers commonly send it: JSON of records, its quotes escaped in the result's own JSON.
const RESULT_TEXT =
  JSON.stringify(
    Array.from({ length: Math.ceil(Number(process.env.BENCH_RESULT_BYTES ?? 0) / 40) }, (_, i) => ({
      id: i,
      name: `item ${i}`,
    })),
  ).slice(0, Number(process.env.BENCH_RESULT_BYTES ?? 0)) || 'hello';

const entry = {
  userId: null,
  agentId: 'agent-1',
  endUserId: null,
  providerId: 'echo',
  tenantId: null,
  toolName: 'echo',
  arguments: { text: 'hello' },
  status: 'pending' as const,
};

/** One round: CALLS calls, AT_ONCE at a time, each answered after one turn of the loop (a quick upstream); CPU-ms per 1,000 calls once all are written. */
async function round(timing: OpenTiming): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'agentgw-outcome-bench-'));
  const handle = await openDatabase({ dataDir: dir });
  await migrateToLatest(handle.db);
  const queue = new MemoryJobQueue();
  const consumer = createAuditConsumer({
    db: handle.db,
    queue,
    clock: systemClock,
    logger: silentLogger(),
    batchSize: 1000,
    batchWaitMs: 50,
    retentionDays: 0,
  });
  await consumer.start();
  const trail = createAuditTrail({ queue, clock: systemClock });
  // As the MCP tools/call does: opened beside the forward, both writes awaited before the answer.
  const call = async () => {
    const id = randomUUID();
    const opened = trail.open({ ...entry, id }, timing);
    await new Promise((resolve) => setImmediate(resolve));
    const result = { content: [{ type: 'text', text: RESULT_TEXT }] };
    await Promise.all([opened, trail.update(id, { status: 'completed', result, duration: 1 })]);
  };
  const started = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      while (next++ < CALLS) await call();
    }),
  );
  await queue.barrier(AUDIT_QUEUES, 120_000);
  const used = process.cpuUsage(started);
  await consumer.stop();
  await queue.close();
  await handle.close();
  await rm(dir, { recursive: true, force: true });
  return (used.user + used.system) / 1000 / (CALLS / 1000);
}

for (let r = 0; r < ROUNDS; r++) {
  for (const timing of ['now', 'with-outcome'] as const) {
    process.stdout.write(
      `round ${r + 1} ${timing.padEnd(12)} ${(await round(timing)).toFixed(0)} CPU-ms per 1,000 calls\n`,
    );
  }
}
