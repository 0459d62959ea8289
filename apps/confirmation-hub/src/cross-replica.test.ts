import { createAuth, type AuthService } from '@agentgw/auth';
import { loadConfig, MemoryEventBus, type HeldCall, type HoldOutcome } from '@agentgw/core';
import { createUser, SseEventReader } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createScratchDatabase,
  isolatedRedisUrl,
  startHolder,
  startHub,
  TEST_SECRETS,
  type ReplicaProcess,
  type ScratchDatabase,
} from './replica-processes.js';
import { insertAgent } from './hub.fixtures.js';

// Response bodies are whatever JSON the processes answered; tests assert on their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

/**
 * Real processes on PostgreSQL + Redis: two confirmation-hub replicas (their own main.ts) and
 * holders that hold calls through the gate the way mcp-gateway replicas do. Held on one
 * process, answered on another, released over Redis pub/sub.
 */
describe.skipIf(!pgUrl || !redisUrl)('confirmations across processes (PostgreSQL + Redis)', () => {
  let database: ScratchDatabase;
  let env: Record<string, string>;
  let hubA: ReplicaProcess;
  let hubB: ReplicaProcess;
  let holder1: ReplicaProcess;
  let holder2: ReplicaProcess;
  /** Holds with a 1.5 s deadline and no fallback of its own for a minute: only the deadline job can end them. */
  let shortDeadlineHolder: ReplicaProcess;
  let auth: AuthService;
  let alice: { id: string; token: string };
  const processes: ReplicaProcess[] = [];
  let sequence = 0;

  const track = async (started: Promise<ReplicaProcess>) => {
    const p = await started;
    processes.push(p);
    return p;
  };

  beforeAll(async () => {
    database = await createScratchDatabase(pgUrl!);
    env = { DATABASE_URL: database.url, REDIS_URL: isolatedRedisUrl(redisUrl!, 13), CONFIRMATION_TIMEOUT_MS: '60000' };
    [hubA, hubB, holder1, holder2, shortDeadlineHolder] = await Promise.all([
      track(startHub(env)),
      track(startHub(env)),
      track(startHolder(env)),
      track(startHolder(env)),
      track(startHolder({ ...env, CONFIRMATION_TIMEOUT_MS: '1500', HELD_CALL_GRACE_MS: '60000' })),
    ]);
    auth = await createAuth({
      config: loadConfig({ ...TEST_SECRETS, LOG_LEVEL: 'silent' }),
      db: database.handle.db,
      bus: new MemoryEventBus(),
    });
    const user = await createUser(
      { db: database.handle.db },
      { email: `alice-${Date.now()}@example.test`, tenantId: 'acme' },
    );
    alice = { id: user.id, token: await auth.signUserToken(user) };
    await insertAgent(database.handle.db, { id: 'agent-1', tenantId: 'acme', ownerId: user.id });
  }, 240_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    await auth?.close();
    await database?.drop();
  });

  const call = (overrides: Partial<HeldCall> = {}): HeldCall => ({
    auditId: `audit-${++sequence}`,
    agentId: 'agent-1',
    userId: alice.id,
    endUserId: alice.id,
    tenantId: 'acme',
    providerId: 'github',
    toolName: 'delete_repo',
    arguments: { repo: 'acme/site', n: sequence },
    risk: 'high',
    ...overrides,
  });

  /** Starts a hold on `holder`; resolves once the pending confirmation is stored, with its id. */
  async function hold(holder: ReplicaProcess, held = call(), signal?: AbortSignal) {
    const answer = fetch(`${holder.url}/hold`, { method: 'POST', body: JSON.stringify({ call: held }), signal }).then(
      async (r) => (await r.json()) as { outcome: HoldOutcome; releasedAt: number },
    );
    answer.catch(() => undefined);
    const id = await vi.waitFor(
      async () => {
        const row = await database.handle.db
          .selectFrom('confirmations')
          .select('id')
          .where('audit_id', '=', held.auditId)
          .executeTakeFirst();
        if (!row) throw new Error('not stored yet');
        return row.id;
      },
      { timeout: 10_000, interval: 20 },
    );
    return { id, answer, held };
  }

  /** A hold whose client disconnects once it is stored; resolves when the holder has let go of it. */
  async function holdAndLeave(holder: ReplicaProcess) {
    const client = new AbortController();
    const { id, answer, held } = await hold(holder, call(), client.signal);
    client.abort();
    await vi.waitFor(
      async () => {
        const row = await database.handle.db
          .selectFrom('confirmations')
          .select('reason')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        expect(row.reason).toBe('The caller went away before a decision.');
      },
      { timeout: 10_000, interval: 20 },
    );
    return { id, held, leave: answer.catch(() => undefined) };
  }

  const redeem = async (holder: ReplicaProcess, token: string, held: HeldCall) =>
    (
      (await (
        await fetch(`${holder.url}/redeem`, { method: 'POST', body: JSON.stringify({ token, call: held }) })
      ).json()) as { ok: boolean }
    ).ok;

  const api = async (hub: ReplicaProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${hub.url}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${alice.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it('held on holder 1, confirmed through hub B: released at once and spent; both hubs stream it; no token runs it again', async () => {
    const streamRes = await fetch(`${hubA.url}/api/v1/stream`, { headers: { authorization: `Bearer ${alice.token}` } });
    const stream = new SseEventReader(streamRes);
    expect((await stream.next())?.event).toBe('connected');

    const { id, answer, held } = await hold(holder1);
    expect((await stream.nextOf('CONFIRMATION_REQUIRED', 10_000)).data).toMatchObject({
      id,
      tool: { name: 'delete_repo' },
    });
    expect((await api(hubA, 'GET', `/confirmation/${id}`)).body.data.status).toBe('pending');

    const sentAt = performance.timeOrigin + performance.now();
    const confirmed = await api(hubB, 'POST', `/confirmation/${id}/confirm`);
    expect(confirmed.status).toBe(200);
    const { outcome, releasedAt } = await answer;
    expect(outcome).toEqual({ decision: 'confirmed', confirmationId: id, confirmedBy: alice.id });
    // Held calls are released over the bus only (no polling) and the deadline is 60 s away: a
    // confirmed outcome is the bus delivering the other hub's answer.
    console.log(`cross-replica confirm → release: ${(releasedAt - sentAt).toFixed(1)} ms`);
    expect((await stream.nextOf('CONFIRMATION_RESOLVED', 10_000)).data).toMatchObject({ id, confirmed: true });
    await stream.close();
    expect((await api(hubA, 'GET', `/confirmation/${id}`)).body.data).toMatchObject({
      status: 'consumed',
      decidedBy: alice.id,
    });
    expect(confirmed.body.confirmation_token).toBeUndefined();
    const forged = (await auth.signConfirmationToken({ confirmationId: id, userId: alice.id })).token;
    expect(await redeem(holder2, forged, held)).toBe(false);
  });

  it('a holder whose client left: the confirmation stays answerable on every hub, and its token works once, on any holder', async () => {
    const { id, held, leave } = await holdAndLeave(holder1);
    const confirmed = await api(hubB, 'POST', `/confirmation/${id}/confirm`);
    expect(confirmed.status).toBe(200);
    const token = confirmed.body.confirmation_token as string;
    expect(await redeem(holder2, token, { ...held, arguments: { ...held.arguments, repo: 'acme/other' } })).toBe(false);
    expect(await redeem(holder2, token, held)).toBe(true);
    expect(await redeem(holder1, token, held)).toBe(false);
    expect((await api(hubA, 'GET', `/confirmation/${id}`)).body.data.status).toBe('consumed');
    await leave;
  });

  it('held on holder 2, rejected through hub A: released as rejected with the reason', async () => {
    const { id, answer } = await hold(holder2);
    const rejected = await api(hubA, 'POST', `/confirmation/${id}/respond`, {
      confirmed: false,
      reason: 'not this one',
    });
    expect(rejected.status).toBe(200);
    expect((await answer).outcome).toEqual({ decision: 'rejected', confirmationId: id, reason: 'not this one' });
    expect((await api(hubB, 'POST', `/confirmation/${id}/confirm`)).status).toBe(409);
  });

  it('a deadline shortened by configuration: the deadline job (on a hub) times the call out', async () => {
    const { id, answer } = await hold(shortDeadlineHolder);
    const { outcome } = await answer;
    expect(outcome).toEqual({ decision: 'timeout', confirmationId: id, reason: 'Request timed out.' });
    const decided = (await api(hubB, 'GET', `/confirmation/${id}`)).body.data;
    expect(decided).toMatchObject({ status: 'rejected', reason: 'Request timed out.' });
    // The holder's 1.5 s deadline (the others' is 60 s), and the timeout decided no earlier than it: times the code recorded.
    expect(Date.parse(decided.expiresAt) - Date.parse(decided.timestamp)).toBe(1_500);
    expect(Date.parse(decided.decidedAt)).toBeGreaterThanOrEqual(Date.parse(decided.expiresAt));
  });

  it('a hub restart during the hold: the call stays held and the restarted hub releases it', async () => {
    const { id, answer } = await hold(holder1);
    await Promise.all([hubA.stop('SIGKILL'), hubB.stop('SIGTERM')]);
    hubA = await track(startHub(env));
    const confirmed = await api(hubA, 'POST', `/confirmation/${id}/confirm`);
    expect(confirmed.status).toBe(200);
    expect((await answer).outcome).toMatchObject({ decision: 'confirmed', confirmationId: id });
  });

  it('the deadline survives every hub being down: a hub started after it fires the overdue job', async () => {
    await hubA.stop('SIGKILL');
    const { id, answer } = await hold(shortDeadlineHolder);
    await new Promise((r) => setTimeout(r, 2_500));
    const still = await database.handle.db
      .selectFrom('confirmations')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(still.status).toBe('pending');
    hubB = await track(startHub(env));
    expect((await answer).outcome).toEqual({ decision: 'timeout', confirmationId: id, reason: 'Request timed out.' });
  });
});
