import type { AuditPatch, AuditTrail } from '@agentgw/audit';
import type { GatewayEvents, GatewayJobs, HeldCall } from '@agentgw/core';
import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { answerConfirmation } from './confirmation-answers.js';
import { createConfirmationGate, type ConfirmationGateHandle } from './confirmation-gate.js';
import { findConfirmation } from './confirmation-records.js';
import {
  AGENT_DISABLED_REASON,
  CALLER_GONE_REASON,
  decideConfirmation,
  rejectIfAgentInactive,
  SHUTDOWN_REASON,
  CANCELLED_REASON,
  TIMEOUT_REASON,
} from './decisions.js';
import { consumeConfirmationTimeouts } from './timeouts.js';
import type { Principal, UserJwtPrincipal } from '@agentgw/auth';
import { permissionsOf } from '@agentgw/auth';

let seq = 0;
const heldCall = (overrides: Partial<HeldCall> = {}): HeldCall => ({
  auditId: `audit-${++seq}`,
  agentId: 'agent-1',
  userId: 'owner-1',
  endUserId: 'alice',
  tenantId: 'acme',
  providerId: 'github',
  toolName: 'delete_repo',
  arguments: { repo: 'acme/site' },
  risk: 'high',
  ...overrides,
});

const person = (
  userId: string,
  roles: Principal['roles'] = [],
  tenantId: string | null = 'acme',
): UserJwtPrincipal => ({
  via: 'jwt',
  userId,
  email: null,
  roles,
  tenantId,
  agentId: null,
  endUserId: userId,
  apiKey: null,
  permissions: permissionsOf(roles),
});

describe.each(testBackends())('confirmation gate on %s (in-process bus and queue)', (backend) => {
  let deps: TestDeps & { audit: AuditTrail };
  let gate: ConfirmationGateHandle;
  let required: GatewayEvents['confirmation.required'][];
  let resolved: GatewayEvents['confirmation.resolved'][];
  let audits: (AuditPatch & { id: string })[];
  let pushes: GatewayJobs['push'][];

  /** Records what the gate tells the audit trail. */
  const audit: AuditTrail = {
    open: async () => 'unused',
    update: async (id, patch) => void audits.push({ id, ...patch }),
  };
  const open = (timeoutMs = 60_000, deadlineGraceMs = 2_000) =>
    (gate = createConfirmationGate(deps, {
      timeoutMs,
      deadlineGraceMs,
      statusIntervalMs: 50,
      maxPending: { perAgent: 20, perUser: 20 },
    }));

  /** Holds a call and returns its outcome promise once the pending confirmation is announced. */
  async function startHold(call = heldCall(), signal = new AbortController().signal, onStatus?: () => void) {
    const before = required.length;
    const outcome = gate.hold(call, { signal, onStatus });
    await vi.waitFor(() => expect(required.length).toBe(before + 1));
    return { outcome, id: required[before]!.id, call };
  }

  beforeEach(async () => {
    deps = Object.assign(await createTestDeps({ backend }), { audit });
    // The agent the held calls come from: answers need it enabled.
    await deps.db
      .insertInto('agents')
      .values({
        id: 'agent-1',
        name: 'agent-1',
        description: null,
        upstream_url: 'http://127.0.0.1:9/a',
        upstream_secret_enc: null,
        required_credentials: JSON.stringify([]),
        tenant_id: 'acme',
        owner_id: 'owner-1',
        runtime_token_hash: `hash-${++seq}`,
        runtime_token_prefix: 'art_x',
        created_at: new Date(),
        updated_at: new Date(),
      })
      .execute();
    required = [];
    resolved = [];
    audits = [];
    pushes = [];
    await deps.bus.subscribe('confirmation.required', (e) => void required.push(e));
    await deps.bus.subscribe('confirmation.resolved', (e) => void resolved.push(e));
    await deps.queue.consume('push', async (jobs) => void pushes.push(...jobs));
    open();
  });
  afterEach(async () => {
    await gate.close();
    await deps.close();
  });

  it('stores a pending confirmation, announces it with arguments and risk, and queues a push for the end user', async () => {
    const { id, call } = await startHold();
    const row = await findConfirmation(deps.db, id);
    expect(row).toMatchObject({
      status: 'pending',
      tool_name: 'delete_repo',
      end_user_id: 'alice',
      audit_id: call.auditId,
    });
    expect(row!.expires_at.getTime() - row!.created_at.getTime()).toBe(60_000);
    expect(required[0]).toMatchObject({
      id,
      tool: { name: 'delete_repo', arguments: { repo: 'acme/site' } },
      risk: { level: 'high' },
    });
    await vi.waitFor(() => expect(pushes).toHaveLength(1));
    expect(pushes[0]).toMatchObject({ userId: 'alice', data: { confirmationId: id, toolName: 'delete_repo' } });
    expect(JSON.stringify(pushes[0])).not.toContain('acme/site');
  });

  it('releases the call as confirmed, with who confirmed, spends the approval and patches the audit record', async () => {
    const { outcome, id, call } = await startHold();
    const answer = await answerConfirmation(deps, person('alice'), id, { confirmed: true });
    expect(await outcome).toEqual({ decision: 'confirmed', confirmationId: id, confirmedBy: 'alice' });
    expect(answer.confirmation.status).toBe('confirmed');
    // The released call is the approval's one run: no token to run it again, and it is spent.
    expect(answer.confirmationToken).toBeUndefined();
    expect((await findConfirmation(deps.db, id))?.status).toBe('consumed');
    const forged = await deps.auth.signConfirmationToken({ confirmationId: id, userId: 'alice' });
    expect(await gate.redeem(forged.token, call)).toBe(false);
    expect(resolved).toEqual([
      {
        id,
        status: 'confirmed',
        confirmedBy: 'alice',
        userId: call.userId,
        endUserId: call.endUserId,
        tenantId: call.tenantId,
        timestamp: expect.any(String),
      },
    ]);
    // Only what the confirmation owns: an `error: null` here would erase an error another writer set.
    await vi.waitFor(() =>
      expect(audits).toStrictEqual([
        {
          id: call.auditId,
          status: 'confirmed',
          confirmedBy: 'alice',
          decidedVia: { carrier: 'console', clientId: null },
        },
      ]),
    );
  });

  it('refuses a release whose approval was spent already, and its audit record says so', async () => {
    const { outcome, id, call } = await startHold();
    // Another release (or a token) consumed the approval before this holder woke.
    await deps.db
      .updateTable('confirmations')
      .set({ status: 'consumed', decided_by: 'alice' })
      .where('id', '=', id)
      .execute();
    await deps.bus.publish('confirmation.resolved', {
      id,
      status: 'confirmed',
      confirmedBy: 'alice',
      userId: call.userId,
      endUserId: call.endUserId,
      tenantId: call.tenantId,
      timestamp: new Date().toISOString(),
    });
    expect(await outcome).toEqual({
      decision: 'rejected',
      confirmationId: id,
      reason: 'The approval was already used.',
    });
    await vi.waitFor(() =>
      expect(audits).toContainEqual({ id: call.auditId, status: 'rejected', error: 'The approval was already used.' }),
    );
  });

  it('answers a rejection with its reason', async () => {
    const { outcome, id, call } = await startHold();
    await answerConfirmation(deps, person('alice'), id, { confirmed: false, reason: 'not today' });
    expect(await outcome).toEqual({ decision: 'rejected', confirmationId: id, reason: 'not today' });
    expect((await findConfirmation(deps.db, id))?.status).toBe('rejected');
    expect(resolved).toMatchObject([{ id, status: 'rejected', reason: 'not today' }]);
    await vi.waitFor(() =>
      expect(audits).toStrictEqual([
        {
          id: call.auditId,
          status: 'rejected',
          error: 'not today',
          decidedVia: { carrier: 'console', clientId: null },
        },
      ]),
    );
  });

  it('times out through the deadline job: rejected with "Request timed out." and CONFIRMATION_RESOLVED', async () => {
    await gate.close();
    open(300);
    const consumer = await consumeConfirmationTimeouts(deps);
    try {
      const { outcome, id } = await startHold();
      expect(await outcome).toEqual({ decision: 'timeout', confirmationId: id, reason: TIMEOUT_REASON });
      expect(await findConfirmation(deps.db, id)).toMatchObject({
        status: 'rejected',
        reason: TIMEOUT_REASON,
        decided_by: null,
      });
      // Stored as the spec says; announced as what it is, so no holder compares reason strings.
      expect(resolved).toMatchObject([{ id, status: 'expired', reason: 'timeout' }]);
      await vi.waitFor(() => expect(audits).toMatchObject([{ status: 'rejected', error: TIMEOUT_REASON }]));
    } finally {
      await consumer.close();
    }
  });

  it('times the call out itself when no deadline job runs (no consumer, lost event)', async () => {
    await gate.close();
    open(200, 100);
    const { outcome, id } = await startHold();
    expect(await outcome).toEqual({ decision: 'timeout', confirmationId: id, reason: TIMEOUT_REASON });
    expect((await findConfirmation(deps.db, id))?.reason).toBe(TIMEOUT_REASON);
  });

  it('refuses a call whose confirmation no transition can move on as timed out, and ends its record once', async () => {
    await gate.close();
    open(1_000, 0);
    const { outcome, id, call } = await startHold();
    // A reason no transition knows (a row changed behind the state machine): neither the deadline nor an answer moves it.
    await deps.db.updateTable('confirmations').set({ reason: 'changed elsewhere' }).where('id', '=', id).execute();
    expect(await outcome).toEqual({ decision: 'timeout', confirmationId: id, reason: TIMEOUT_REASON });
    expect((await findConfirmation(deps.db, id))?.status).toBe('pending');
    // Before, the holder wrote nothing here and the record stayed pending forever.
    expect(audits).toStrictEqual([{ id: call.auditId, status: 'rejected', error: TIMEOUT_REASON }]);
  });

  it('keeps the confirmation answerable when the held client goes away; confirming it then issues a token for one run', async () => {
    const client = new AbortController();
    const { outcome, id, call } = await startHold(heldCall(), client.signal);
    client.abort();
    expect(await outcome).toEqual({ decision: 'expired', confirmationId: id });
    expect(await findConfirmation(deps.db, id)).toMatchObject({ status: 'pending', reason: CALLER_GONE_REASON });
    expect(resolved).toEqual([]);
    await vi.waitFor(() =>
      expect(audits).toStrictEqual([{ id: call.auditId, status: 'failed', error: CALLER_GONE_REASON }]),
    );
    const answer = await answerConfirmation(deps, person('alice'), id, { confirmed: true });
    expect(answer.confirmation).toMatchObject({ status: 'confirmed', reason: null, decidedBy: 'alice' });
    expect(answer.confirmationToken?.expiresIn).toBeGreaterThan(0);
    expect(resolved).toMatchObject([{ id, status: 'confirmed' }]);
    // The held call's audit record stays as it ended: the redeemed call writes its own.
    expect(audits).toHaveLength(1);
    expect(await gate.redeem(answer.confirmationToken!.token, call)).toBe(true);
    expect(await gate.redeem(answer.confirmationToken!.token, call)).toBe(false);
  });

  it('a decision that wins the race against the client leaving stands, and is spent by the release', async () => {
    const client = new AbortController();
    const { outcome, id } = await startHold(heldCall(), client.signal);
    const answer = await answerConfirmation(deps, person('alice'), id, { confirmed: true });
    client.abort();
    expect((await outcome).decision).toBe('confirmed');
    expect(answer.confirmationToken).toBeUndefined();
    expect((await findConfirmation(deps.db, id))?.status).toBe('consumed');
  });

  it('expires calls still held when the gate closes (shutdown: not run, audit failed), and refuses new holds', async () => {
    const { outcome, id, call } = await startHold();
    await gate.close();
    expect(await outcome).toEqual({ decision: 'expired', confirmationId: id });
    expect(await findConfirmation(deps.db, id)).toMatchObject({ status: 'expired', reason: SHUTDOWN_REASON });
    expect(audits).toContainEqual({ id: call.auditId, status: 'failed', error: SHUTDOWN_REASON });
    expect(resolved).toContainEqual(expect.objectContaining({ id, status: 'expired', reason: 'shutdown' }));
    await expect(gate.hold(heldCall(), { signal: new AbortController().signal })).rejects.toThrow(/closed/);
  });

  it('applies a decision arriving twice (or two racing) once', async () => {
    const { outcome, id } = await startHold();
    const results = await Promise.all([
      decideConfirmation(deps, id, { confirmed: true, decidedBy: 'alice', via: 'console' }),
      decideConfirmation(deps, id, { confirmed: false, decidedBy: 'admin', via: 'console' }),
      decideConfirmation(deps, id, { confirmed: true, decidedBy: 'alice', via: 'console' }),
    ]);
    expect(results.filter((r) => r.applied)).toHaveLength(1);
    const winner = results.find((r) => r.applied)!.row;
    expect((await outcome).decision).toBe(winner.status);
    expect(resolved).toHaveLength(1);
    await expect(answerConfirmation(deps, person('alice'), id, { confirmed: false })).rejects.toMatchObject({
      status: 409,
    });
  });

  it('takes a person’s answer from their own client only for their own call as held, first decision wins, carrier and client recorded', async () => {
    const own = heldCall({ agentId: null, userId: 'alice', endUserId: 'alice' });
    const { outcome, id } = await startHold(own);
    const answer = { confirmed: true, userId: 'alice', clientId: 'client-1' };
    expect(await gate.answerFromClient(id, { ...own, arguments: { repo: 'acme/other' } }, answer)).toBe('refused');
    expect(await gate.answerFromClient(id, own, { ...answer, userId: 'mallory' })).toBe('refused');
    expect(await gate.answerFromClient(id, own, answer)).toBe('applied');
    expect(await gate.answerFromClient(id, own, { ...answer, confirmed: false })).toBe('already_decided');
    expect((await outcome).decision).toBe('confirmed');
    expect(await findConfirmation(deps.db, id)).toMatchObject({
      status: 'consumed',
      decided_by: 'alice',
      decided_via: 'client',
      decided_client_id: 'client-1',
    });
    await expect(answerConfirmation(deps, person('alice'), id, { confirmed: false })).rejects.toMatchObject({
      status: 409,
    });
  });

  it('never takes a client answer for an agent’s call; the console’s answer is recorded as the console’s', async () => {
    const { outcome, id, call } = await startHold();
    const answer = { confirmed: true, userId: 'alice', clientId: 'client-1' };
    expect(await gate.answerFromClient(id, call, answer)).toBe('refused');
    await answerConfirmation(deps, person('alice'), id, { confirmed: false });
    expect((await outcome).decision).toBe('rejected');
    expect(await findConfirmation(deps.db, id)).toMatchObject({ decided_via: 'console', decided_client_id: null });
  });

  describe('rounds (a 2026-07-28 client asked by input_required, nobody holding the call)', () => {
    const own = () => heldCall({ agentId: null, userId: 'alice', endUserId: 'alice' });

    it('is announced as a hold is; pending until decided; a client approval releases it once, a replay finds it spent (no audit write)', async () => {
      const call = own();
      const { confirmationId: id } = await gate.openRound(call);
      expect(required.map((r) => r.id)).toContain(id);
      expect(await gate.settleRound(id, call)).toMatchObject({ decision: 'pending', confirmationId: id });
      expect(await gate.settleRound(id, { ...call, arguments: { repo: 'acme/other' } })).toMatchObject({
        decision: 'refused',
      });
      expect(await gate.answerFromClient(id, call, { confirmed: true, userId: 'alice', clientId: 'c1' })).toBe(
        'applied',
      );
      expect(audits).toEqual([
        {
          id: call.auditId,
          status: 'confirmed',
          confirmedBy: 'alice',
          decidedVia: { carrier: 'client', clientId: 'c1' },
        },
      ]);
      const [first, second] = await Promise.all([gate.settleRound(id, call), gate.settleRound(id, call)]);
      expect([first.decision, second.decision].sort()).toEqual(['confirmed', 'rejected']);
      expect(await gate.settleRound(id, call)).toMatchObject({
        decision: 'rejected',
        reason: 'The approval was already used.',
      });
      expect(audits).toHaveLength(1);
      expect(await findConfirmation(deps.db, id)).toMatchObject({ status: 'consumed' });
    });

    it('a console rejection, and a deadline passed, are what the retry finds', async () => {
      const rejected = own();
      const { confirmationId: a } = await gate.openRound(rejected);
      await answerConfirmation(deps, person('alice'), a, { confirmed: false });
      expect(await gate.settleRound(a, rejected)).toMatchObject({ decision: 'rejected' });
      const late = own();
      const { confirmationId: b } = await gate.openRound(late);
      await deps.db
        .updateTable('confirmations')
        .set({ expires_at: new Date(Date.now() - 1) })
        .where('id', '=', b)
        .execute();
      expect(await gate.settleRound(b, late)).toMatchObject({ decision: 'timeout', reason: TIMEOUT_REASON });
      expect(await findConfirmation(deps.db, b)).toMatchObject({ status: 'rejected', reason: TIMEOUT_REASON });
    });

    it('the caller cancels it (a task’s tasks/cancel): only for its own call, while pending; the record says so, no later approval', async () => {
      const call = own();
      const { confirmationId: id } = await gate.openRound(call);
      expect(await gate.cancelRound(id, { ...call, arguments: { repo: 'acme/other' } })).toBe('refused');
      expect(await gate.cancelRound(id, call)).toBe('applied');
      expect(await gate.cancelRound(id, call)).toBe('already_decided');
      expect(await findConfirmation(deps.db, id)).toMatchObject({ status: 'rejected', reason: CANCELLED_REASON });
      expect(audits).toEqual([{ id: call.auditId, status: 'rejected', error: CANCELLED_REASON }]);
      expect(await gate.answerFromClient(id, call, { confirmed: true, userId: 'alice', clientId: 'c1' })).toBe(
        'already_decided',
      );
      expect(await gate.settleRound(id, call)).toMatchObject({ decision: 'rejected', reason: CANCELLED_REASON });
    });
  });

  it('refuses an answer after the deadline and times the confirmation out on the spot', async () => {
    const { outcome, id } = await startHold();
    await deps.db
      .updateTable('confirmations')
      .set({ expires_at: new Date(Date.now() - 1) })
      .where('id', '=', id)
      .execute();
    const late = await decideConfirmation(deps, id, { confirmed: true, decidedBy: 'alice', via: 'console' });
    expect(late.applied).toBe(false);
    expect(late.row).toMatchObject({ status: 'rejected', reason: TIMEOUT_REASON });
    expect((await outcome).decision).toBe('timeout');
  });

  it('keeps the held client informed while it waits', async () => {
    const statuses: number[] = [];
    const { outcome, id } = await startHold(
      heldCall(),
      new AbortController().signal,
      () => void statuses.push(Date.now()),
    );
    await vi.waitFor(() => expect(statuses.length).toBeGreaterThanOrEqual(3));
    await decideConfirmation(deps, id, { confirmed: true, decidedBy: 'alice', via: 'console' });
    await outcome;
    const count = statuses.length;
    await new Promise((r) => setTimeout(r, 120));
    expect(statuses).toHaveLength(count);
  });

  it('refuses answers from an agent credential, even one naming the user', async () => {
    const { id } = await startHold();
    const agentActing = {
      ...person('alice'),
      via: 'api_key' as const,
      agentId: 'agent-1',
      apiKey: { id: 'key-1', scopes: [] },
    };
    await expect(answerConfirmation(deps, agentActing, id, { confirmed: true })).rejects.toMatchObject({
      status: 403,
      code: 'AGENT_CANNOT_CONFIRM',
    });
    expect((await findConfirmation(deps.db, id))?.status).toBe('pending');
  });

  it('rejects the held calls of an agent once it is disabled, and refuses answers to them', async () => {
    const first = await startHold();
    const second = await startHold();
    expect(await rejectIfAgentInactive(deps, 'agent-1')).toBe(0);
    await deps.db.updateTable('agents').set({ is_active: false }).where('id', '=', 'agent-1').execute();
    expect(await rejectIfAgentInactive(deps, 'agent-1')).toBe(2);
    expect(await rejectIfAgentInactive(deps, 'agent-1')).toBe(0);
    for (const held of [first, second]) {
      expect(await held.outcome).toEqual({
        decision: 'rejected',
        confirmationId: held.id,
        reason: AGENT_DISABLED_REASON,
      });
    }
    const third = await startHold();
    await expect(answerConfirmation(deps, person('alice'), third.id, { confirmed: true })).rejects.toMatchObject({
      status: 403,
      code: 'AGENT_DISABLED',
    });
    expect((await third.outcome).decision).toBe('rejected');
  });

  describe('pending caps', () => {
    const pendingCount = async () =>
      Number(
        (
          await deps.db
            .selectFrom('confirmations')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('status', '=', 'pending')
            .executeTakeFirstOrThrow()
        ).n,
      );

    it.each([
      ['one agent', (i: number) => heldCall({ endUserId: `user-${i}` })],
      ['one end user', (i: number) => heldCall({ agentId: `agent-x${i}` })],
    ])(
      'the 21st concurrent hold for %s is refused with 429 RATE_LIMITED; the 20 others stay pending, and a decision frees a slot',
      async (_who, make) => {
        const calls = Array.from({ length: 21 }, (_, i) => make(i));
        const settled = calls.map((call) =>
          gate.hold(call, { signal: new AbortController().signal }).then(
            (outcome) => ({ outcome }),
            (err: unknown) => ({ err: err as { status: number; code: string } }),
          ),
        );
        await vi.waitFor(async () =>
          expect((await pendingCount()) + audits.filter((a) => a.status === 'rejected').length).toBe(21),
        );
        expect(await pendingCount()).toBe(20);
        const refusedAudit = audits.filter((a) => a.status === 'rejected');
        expect(refusedAudit).toHaveLength(1);
        expect(refusedAudit[0]!.error).toMatch(/Too many calls waiting/);
        const refused = calls.findIndex((c) => c.auditId === refusedAudit[0]!.id);
        expect(await settled[refused]).toMatchObject({ err: { status: 429, code: 'RATE_LIMITED' } });
        expect(required).toHaveLength(20);

        await decideConfirmation(deps, required[0]!.id, { confirmed: false, decidedBy: 'alice', via: 'console' });
        const again = await startHold(calls[refused]);
        await decideConfirmation(deps, again.id, { confirmed: false, decidedBy: 'alice', via: 'console' });
        expect((await again.outcome).decision).toBe('rejected');
      },
    );
  });

  describe('exact-call token', () => {
    /** A token exists only for a hold whose client left before the answer. */
    async function confirmedToken(call = heldCall()) {
      const client = new AbortController();
      const { outcome, id } = await startHold(call, client.signal);
      client.abort();
      await outcome;
      const answer = await answerConfirmation(deps, person('alice'), id, { confirmed: true });
      return { token: answer.confirmationToken!.token, id, call };
    }

    it('lets its exact call through once, and moves the confirmation to consumed', async () => {
      const { token, id, call } = await confirmedToken();
      const sameCallReordered = { ...call, auditId: 'another-audit', arguments: { repo: 'acme/site' } };
      expect(await gate.redeem(token, sameCallReordered)).toBe(true);
      expect((await findConfirmation(deps.db, id))?.status).toBe('consumed');
      expect(await gate.redeem(token, call)).toBe(false);
    });

    it('refuses a changed argument, another tool, agent, provider or end user, and stays usable for its call', async () => {
      const { token, call } = await confirmedToken();
      for (const change of [
        { arguments: { repo: 'acme/other' } },
        { toolName: 'archive_repo' },
        { agentId: 'agent-2' },
        { providerId: 'gitlab' },
        { endUserId: 'mallory' },
      ]) {
        expect(await gate.redeem(token, { ...call, ...change })).toBe(false);
      }
      expect(await gate.redeem(token, call)).toBe(true);
      expect(await gate.redeem(token, call)).toBe(false);
    });

    it('refuses junk, a login token and a token of a confirmation that was rejected', async () => {
      const { call } = await confirmedToken();
      expect(await gate.redeem('not-a-token', call)).toBe(false);
      expect(
        await gate.redeem(
          await deps.auth.signUserToken({ id: 'alice', email: 'a@x.test', roles: [], tenantId: null }),
          call,
        ),
      ).toBe(false);
      const { outcome, id } = await startHold(call);
      await decideConfirmation(deps, id, { confirmed: false, decidedBy: 'alice', via: 'console' });
      await outcome;
      const forged = await deps.auth.signConfirmationToken({ confirmationId: id, userId: 'alice' });
      expect(await gate.redeem(forged.token, call)).toBe(false);
    });
  });
});
