/**
 * A bare audit writer process for the kill and read-your-writes tests: consumes the BullMQ
 * queue of prefix AUDIT_QUEUE_PREFIX on REDIS_URL into DATABASE_URL until it is killed, with
 * batches waiting AUDIT_BATCH_WAIT_MS (default 5) to fill. Jobs it held when killed are taken
 * over by the next writer after the (short) lock below.
 */
import { BullJobQueue, silentLogger, systemClock } from '@agentgw/core';
import { openDatabase } from '@agentgw/db';
import { createAuditConsumer } from './audit-consumer.js';

const handle = await openDatabase({ url: process.env.DATABASE_URL });
const queue = new BullJobQueue({
  url: process.env.REDIS_URL!,
  prefix: process.env.AUDIT_QUEUE_PREFIX,
  lockDurationMs: 1500,
  stalledIntervalMs: 500,
  backoffMs: 100,
});
const consumer = createAuditConsumer({
  db: handle.db,
  queue,
  clock: systemClock,
  logger: silentLogger(),
  batchSize: 200,
  batchWaitMs: Number(process.env.AUDIT_BATCH_WAIT_MS ?? 5),
  retentionDays: 0,
  concurrency: 4,
});
await consumer.start();
process.stdout.write('ready\n');
