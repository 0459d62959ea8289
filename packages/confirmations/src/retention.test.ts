import type { ConfirmationStatus } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { insertPending } from './confirmation-records.js';
import { consumeConfirmationRetention, pruneConfirmations } from './retention.js';

const DAY_MS = 86_400_000;

describe.each(testBackends())('confirmation retention on %s', (backend) => {
  let deps: TestDeps;
  let seq = 0;
  beforeEach(async () => {
    deps = await createTestDeps({ backend });
  });
  afterEach(() => deps.close());

  /** A confirmation raised `ageDays` ago, left in `status`, with a deadline five minutes after it was raised. */
  async function stored(status: ConfirmationStatus, ageDays: number): Promise<string> {
    const id = `c-${++seq}`;
    const createdAt = new Date(Date.now() - ageDays * DAY_MS);
    await insertPending(deps.db, {
      id,
      call: {
        auditId: `a-${seq}`,
        agentId: 'agent-1',
        userId: 'u',
        endUserId: 'u',
        tenantId: null,
        providerId: 'p',
        toolName: 't',
        arguments: {},
        risk: 'low',
      },
      createdAt,
      expiresAt: new Date(createdAt.getTime() + 300_000),
    });
    await deps.db.updateTable('confirmations').set({ status }).where('id', '=', id).execute();
    return id;
  }

  const remaining = async () =>
    (await deps.db.selectFrom('confirmations').select('id').orderBy('id').execute()).map((r) => r.id).sort();

  it('deletes decided confirmations raised before the cutoff and pending ones long past their deadline; keeps the rest', async () => {
    const old = await Promise.all(
      (['confirmed', 'rejected', 'expired', 'consumed', 'pending'] as const).map((s) => stored(s, 40)),
    );
    const recent = await Promise.all((['confirmed', 'rejected', 'consumed'] as const).map((s) => stored(s, 10)));
    const live = await stored('pending', 0);
    expect(await pruneConfirmations(deps.db, new Date(Date.now() - 30 * DAY_MS))).toBe(old.length);
    expect(await remaining()).toEqual([...recent, live].sort());
  });

  it('the hourly job runs the pruning with CONFIRMATION_RETENTION_DAYS and schedules the next hour; 0 turns it off', async () => {
    expect(await consumeConfirmationRetention(deps, 0)).toBeUndefined();
    await stored('rejected', 8);
    const kept = await stored('rejected', 6);
    const consumer = (await consumeConfirmationRetention(deps, 7))!;
    try {
      const enqueue = vi.spyOn(deps.queue, 'enqueue');
      await deps.queue.enqueue('confirmation-retention', { slot: 1 });
      await vi.waitFor(async () => expect(await remaining()).toEqual([kept]));
      await vi.waitFor(() =>
        expect(enqueue).toHaveBeenCalledWith(
          'confirmation-retention',
          { slot: 2 },
          expect.objectContaining({ jobId: 'confirmation-retention:2' }),
        ),
      );
    } finally {
      await consumer.close();
    }
  });
});
