/**
 * A bare audit producer process (as an mcp-gateway replica records calls) for the
 * read-your-writes test: on each stdin line `<n>` it records one call (create, then its
 * outcome) on the BullMQ queue of prefix AUDIT_QUEUE_PREFIX on REDIS_URL, and prints
 * `ack <n> <auditId>` once both records are enqueued, i.e. when a gateway would answer.
 */
import { createInterface } from 'node:readline';
import { createAuditTrail } from '@agentgw/audit';
import { BullJobQueue, systemClock } from '@agentgw/core';

const queue = new BullJobQueue({ url: process.env.REDIS_URL!, prefix: process.env.AUDIT_QUEUE_PREFIX });
const trail = createAuditTrail({ queue, clock: systemClock });
const producer = process.env.PRODUCER_NAME ?? 'producer';

for await (const line of createInterface({ input: process.stdin })) {
  const n = line.trim();
  const id = await trail.open({
    userId: 'u-ryw',
    agentId: producer,
    endUserId: null,
    providerId: 'p1',
    tenantId: 't-ryw',
    toolName: 'ryw.tool',
    arguments: { n },
    status: 'pending',
  });
  await trail.update(id, { status: 'completed', duration: 1 });
  process.stdout.write(`ack ${n} ${id}\n`);
}
await queue.close();
