import type { Consumer } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import type { ConfirmationDeps } from './decisions.js';

/** Retention runs once an hour; each run's job id names its hour, so replicas enqueue it once. */
export const CONFIRMATION_RETENTION_INTERVAL_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Rows deleted per statement, so one run never holds the table for long. */
const PRUNE_STEP = 5_000;

/**
 * Deletes the confirmations raised before `cutoff` that are decided (anything but pending), and
 * pending ones whose deadline passed before it (a lost deadline job left them). Returns how
 * many rows went.
 */
export async function pruneConfirmations(db: Kysely<Database>, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const step = await db
      .deleteFrom('confirmations')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('confirmations')
          .select('id')
          .where('created_at', '<', cutoff)
          .where((w) => w.or([w('status', '<>', 'pending'), w('expires_at', '<', cutoff)]))
          .limit(PRUNE_STEP),
      )
      .executeTakeFirst();
    const rows = Number(step.numDeletedRows);
    deleted += rows;
    if (rows < PRUNE_STEP) return deleted;
  }
}

/**
 * Consumes the hourly `confirmation-retention` job (the hub runs it): deletes confirmations
 * older than `retentionDays` and schedules the next hour's run. Off when `retentionDays` is 0.
 */
export async function consumeConfirmationRetention(
  deps: ConfirmationDeps,
  retentionDays: number,
): Promise<Consumer | undefined> {
  if (retentionDays <= 0) return undefined;
  const slotOf = (ms: number) => Math.floor(ms / CONFIRMATION_RETENTION_INTERVAL_MS);
  const schedule = async (afterSlot: number) => {
    const slot = afterSlot + 1;
    const delayMs = Math.max(0, slot * CONFIRMATION_RETENTION_INTERVAL_MS - deps.clock.now().getTime());
    await deps.queue.enqueue(
      'confirmation-retention',
      { slot },
      { jobId: `confirmation-retention:${slot}`, delayMs, attempts: 3 },
    );
  };
  const consumer = await deps.queue.consume('confirmation-retention', async (jobs) => {
    const cutoff = new Date(deps.clock.now().getTime() - retentionDays * DAY_MS);
    const deleted = await pruneConfirmations(deps.db, cutoff);
    deps.logger.info({ deleted, cutoff: cutoff.toISOString() }, 'confirmation retention run');
    await schedule(Math.max(...jobs.map((j) => j.slot)));
  });
  await schedule(slotOf(deps.clock.now().getTime()));
  return consumer;
}
