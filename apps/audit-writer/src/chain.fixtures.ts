import type { AuditRecordJob } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { validateJob, type ValidJob } from './audit-job.js';
import { writeBatch } from './batch-writer.js';

/** A job as the writer takes it, for tests that call writeBatch directly; an invalid one fails the test with its reason. */
export function validJob(job: unknown): ValidJob {
  const checked = validateJob(job);
  if (!checked.ok) throw new Error(checked.reason);
  return checked.value;
}

/**
 * Test data for the chain tests: `count` records over two tenants and the no-tenant chain,
 * each created then completed (two links per row), written in batches of 7 through writeBatch.
 * Returns the ids in creation order.
 */
export async function writeChainFixture(db: Kysely<Database>, count: number): Promise<string[]> {
  const tenants = ['t-a', 't-b', null];
  const jobs: AuditRecordJob[] = [];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `rec-${String(i).padStart(4, '0')}`;
    ids.push(id);
    const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    jobs.push({
      op: 'create',
      id,
      key: `c:${id}`,
      seq: i,
      at,
      userId: `u${i % 3}`,
      agentId: 'ag',
      endUserId: null,
      providerId: 'p',
      tenantId: tenants[i % 3] ?? null,
      toolName: 'fs.read',
      arguments: { i },
      status: 'pending',
    });
  }
  for (let i = 0; i < count; i++) {
    jobs.push({
      op: 'update',
      id: ids[i]!,
      key: `u:${ids[i]}`,
      seq: count + i,
      at: new Date(Date.UTC(2026, 0, 2) + i * 1000).toISOString(),
      patch: { status: 'completed', result: { ok: i }, duration: i },
    });
  }
  for (let i = 0; i < jobs.length; i += 7) {
    await writeBatch(db, jobs.slice(i, i + 7).map(validJob));
  }
  return ids;
}
