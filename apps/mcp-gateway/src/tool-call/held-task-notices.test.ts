import { CANCELLED_REASON } from '@agentgw/confirmations';
import { ManualClock, MemoryEventBus, silentLogger, type ConfirmationResolution } from '@agentgw/core';
import { describe, expect, it, vi } from 'vitest';
import type { HeldTaskRef } from '../extensions/task-ids.js';
import type { McpResult } from '../mcp-context.js';
import { ROUND_ENDED_REASON } from './held-call-round.js';
import { HeldTaskNotices } from './held-task-notices.js';
import { MemoryHeldTaskStore, type HeldTaskEntry, type HeldTaskOutcome } from './held-task-store.js';

const ref = (confirmationId: string): HeldTaskRef => ({
  kind: 'held',
  confirmationId,
  auditId: `audit-${confirmationId}`,
  providerId: 'p1',
  toolName: 'drop',
  risk: 'high',
});

/** Notices over an in-process bus and store holding an entry for each of `ids` (`outcome` kept on all). */
async function setUp(ids: string[], outcome: HeldTaskOutcome | null = null) {
  const clock = new ManualClock();
  const bus = new MemoryEventBus();
  const store = new MemoryHeldTaskStore(clock);
  const at = clock.now().toISOString();
  for (const id of ids) {
    const entry: HeldTaskEntry = {
      arguments: { table: 't' },
      route: { kind: 'proxied' },
      alwaysConfirm: false,
      mode: null,
      createdAt: at,
      lastUpdatedAt: at,
      expiresAt: clock.now().getTime() + 60_000,
      outcome,
    };
    await store.put(id, entry);
  }
  const notices = new HeldTaskNotices({ bus, store, logger: silentLogger() });
  const told: McpResult[] = [];
  const decide = (id: string, resolution: ConfirmationResolution) =>
    bus.publish('confirmation.resolved', {
      ...resolution,
      id,
      userId: 'u1',
      endUserId: null,
      tenantId: null,
      timestamp: '2026-01-01T00:00:05.000Z',
    });
  return { notices, told, decide };
}

describe('HeldTaskNotices', () => {
  it('tells a following listen its task as tasks/get would show it without running it; not another confirmation’s, nothing after stop', async () => {
    const { notices, told, decide } = await setUp(['c1', 'c2']);
    const following = await notices.follow([{ clientId: 'task-1', ref: ref('c1') }], (task) => told.push(task));
    await decide('c2', { status: 'confirmed', confirmedBy: 'u1' });
    await decide('c1', { status: 'confirmed', confirmedBy: 'u1' });
    await vi.waitFor(() => expect(told).toHaveLength(1));
    expect(told[0]).toEqual({
      taskId: 'task-1',
      status: 'working',
      statusMessage: expect.stringContaining('next tasks/get runs it'),
      createdAt: '2026-01-01T00:00:00.000Z',
      lastUpdatedAt: '2026-01-01T00:00:05.000Z',
      ttlMs: 60_000,
      pollIntervalMs: expect.any(Number),
    });
    following.stop();
    await decide('c1', { status: 'rejected', reason: 'no' });
    const other = await notices.follow([{ clientId: 'task-2', ref: ref('c2') }], (task) => told.push(task));
    await decide('c2', { status: 'rejected', reason: 'no' });
    await vi.waitFor(() => expect(told).toHaveLength(2));
    expect(told[1]).toMatchObject({ taskId: 'task-2', status: 'failed' });
    other.stop();
  });

  it.each<[string, ConfirmationResolution, McpResult]>([
    [
      'a rejection → failed with the refusal',
      { status: 'rejected', reason: 'Too risky' },
      { status: 'failed', error: { code: -32004, data: { decision: 'rejected', reason: 'Too risky' } } },
    ],
    ['a tasks/cancel → cancelled', { status: 'rejected', reason: CANCELLED_REASON }, { status: 'cancelled' }],
    [
      'a timeout → failed, decision timeout',
      { status: 'expired', reason: 'timeout' },
      { status: 'failed', error: { code: -32004, data: { decision: 'timeout' } } },
    ],
    [
      'an end without a decision → failed, the call not run',
      { status: 'expired', reason: 'shutdown' },
      { status: 'failed', error: { code: -32004, data: { decision: 'rejected', reason: ROUND_ENDED_REASON } } },
    ],
  ])('tells %s', async (_, resolution, shown) => {
    const { notices, told, decide } = await setUp(['c1']);
    await notices.follow([{ clientId: 'task-1', ref: ref('c1') }], (task) => told.push(task));
    await decide('c1', resolution);
    await vi.waitFor(() => expect(told).toHaveLength(1));
    expect(told[0]).toMatchObject({ taskId: 'task-1', ...shown });
    expect(told[0]).not.toHaveProperty('result');
  });

  it('tells an end the task keeps already as it is (a poll ran it first)', async () => {
    const { notices, told, decide } = await setUp(['c1'], { kind: 'completed', result: { content: [] } });
    await notices.follow([{ clientId: 'task-1', ref: ref('c1') }], (task) => told.push(task));
    await decide('c1', { status: 'confirmed', confirmedBy: null });
    await vi.waitFor(() => expect(told).toHaveLength(1));
    expect(told[0]).toMatchObject({ status: 'completed', result: { content: [] } });
  });
});
