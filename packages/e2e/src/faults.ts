import { SseEventReader } from '@agentgw/testkit';
import { expect, it, vi } from 'vitest';
import type { Json } from './gateway-api.js';
import { rawToolsCall } from './mcp-clients.js';
import type { SuiteContext } from './suite.js';
import type { ClusterTarget, DistributedTarget, ReplicatedTarget } from './targets.js';

type FaultContext = SuiteContext & { target: DistributedTarget };
/** What the helpers below need: either distributed topology. */
type ReplicaContext = SuiteContext & { target: ReplicatedTarget };

/** How one tool call ended: acknowledged (a tool result), a clean error (any answer or a dropped connection), or hung. */
interface Outcome {
  n: string;
  kind: 'acknowledged' | 'error' | 'hung';
  detail: string;
  /** When the call was sent and when its answer (or failure) came, epoch ms. */
  startedAt?: number;
  endedAt?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function classify(n: string, answer: Awaited<ReturnType<typeof rawToolsCall>>): Outcome {
  if ('error' in answer)
    return { n, kind: answer.error === 'timeout' ? 'hung' : 'error', detail: `connection: ${answer.error}` };
  const body = answer.body;
  if (answer.status === 200 && body?.result && !body.result.isError)
    return { n, kind: 'acknowledged', detail: 'result' };
  return {
    n,
    kind: 'error',
    detail: `HTTP ${answer.status}${body?.error ? ` JSON-RPC ${body.error.code} ${String(body.error.message).slice(0, 80)}` : ''}`,
  };
}

/** Counts of outcome details, e.g. `HTTP 502 ×3, connection: fetch failed ×1`. */
function tally(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes.filter((x) => x.kind !== 'acknowledged'))
    counts.set(o.detail, (counts.get(o.detail) ?? 0) + 1);
  return [...counts].map(([detail, count]) => `${detail} ×${count}`).join(', ') || 'none';
}

/**
 * Calls `tool` through the router with `workers` callers in parallel until `stop()` resolves,
 * each call with a unique `n` (`<prefix>-<i>`), so audit rows can be matched to calls.
 */
function load(ctx: ReplicaContext, token: string, tool: string, prefix: string, workers: number) {
  const outcomes: Outcome[] = [];
  let stopped = false;
  let next = 0;
  const url = `${ctx.target.baseUrl}/api/v1/mcp/mcp`;
  const running = Promise.all(
    Array.from({ length: workers }, async () => {
      while (!stopped) {
        const n = `${prefix}-${next++}`;
        const startedAt = Date.now();
        const outcome = classify(n, await rawToolsCall(url, { authorization: `Bearer ${token}` }, tool, { n }, 30_000));
        outcomes.push({ ...outcome, startedAt, endedAt: Date.now() });
      }
    }),
  );
  return {
    outcomes,
    async stop() {
      stopped = true;
      await running;
      return outcomes;
    },
  };
}

/** Waits until every acknowledged call has its audit row (matched by `n`), or fails naming the missing ones. */
async function expectAudited(
  ctx: ReplicaContext,
  agentId: string,
  acknowledged: Outcome[],
  timeoutMs = 30_000,
): Promise<{ rows: number; waitedMs: number }> {
  let rows: Json[] = [];
  const started = Date.now();
  try {
    await vi.waitFor(
      async () => {
        rows = await ctx.auditRowsOf(agentId);
        const written = new Set(rows.filter((r) => r.status === 'completed').map((r) => String(r.arguments?.n)));
        const missing = acknowledged.filter((o) => !written.has(o.n)).map((o) => o.n);
        const seen = missing.map(
          (n) =>
            `${n}: ${
              rows
                .filter((r) => String(r.arguments?.n) === n)
                .map((r) => r.status)
                .join('/') || 'no row'
            }`,
        );
        expect(seen, `acknowledged calls without a completed audit row (${rows.length} rows)`).toEqual([]);
      },
      { timeout: timeoutMs, interval: 250 },
    );
  } catch (error) {
    const logs = ['audit-writer', 'mcp-gateway']
      .flatMap((app) =>
        app === 'audit-writer' ? [ctx.target.services['audit-writer']] : ctx.target.services['mcp-gateway'],
      )
      .map((s) => `--- ${s.app} ${s.url}:\n${s.current().output().slice(-2_000)}`);
    throw new Error(`${(error as Error).message}\n${logs.join('\n')}`);
  }
  return { rows: rows.length, waitedMs: Date.now() - started };
}

/** Every call answered: none may hang. */
function expectNoneHung(outcomes: Outcome[]): void {
  expect(outcomes.filter((o) => o.kind === 'hung').map((o) => o.n)).toEqual([]);
}

/** Ten calls in a row through the router, all answered with a result. */
async function expectServing(ctx: ReplicaContext, token: string, prefix: string): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const outcome = classify(
      `${prefix}-${i}`,
      await rawToolsCall(`${ctx.target.baseUrl}/api/v1/mcp/mcp`, { authorization: `Bearer ${token}` }, 'a_echo', {
        n: `${prefix}-${i}`,
      }),
    );
    expect(outcome, `call ${i} after the fault`).toMatchObject({ kind: 'acknowledged' });
  }
}

/** The distributed fault runs, on the target the spec suite just passed on. */
export function describeFaultRuns(context: () => FaultContext): void {
  describeReplicaKills(context);
  it('fault: restart Redis (a private redis-server) with calls flowing and a call held', async () => {
    const ctx = context();
    const { api, adminToken, target } = ctx;
    const fast = await ctx.agentOnAlpha('fault-redis', false);
    const careful = await ctx.agentOnAlpha('fault-redis-held', true);
    const t0 = Date.now();
    const held = rawToolsCall(
      `${target.baseUrl}/api/v1/mcp/mcp`,
      { authorization: `Bearer ${careful.token}` },
      'a_transfer',
      { marker: 'redis-hold' },
      60_000,
    );
    const pending = await ctx.pendingWith('redis-hold');
    const traffic = load(ctx, fast.token, 'a_echo', 'redis', 4);
    await sleep(500);
    const oldPid = target.redis.pid();
    const restartAt = Date.now() - t0;
    const goneAt = Date.now();
    await target.redis.restart();
    const backAt = Date.now();
    await sleep(3_000);
    const outcomes = await traffic.stop();
    // The decision travels over Redis pub/sub: it either releases the hold or the hold fails cleanly.
    const decided = await api.post(`/api/v1/confirmation/${pending.id}/confirm`, { token: adminToken });
    const holdOutcome = classify('redis-hold', await held);
    expectNoneHung([...outcomes, holdOutcome]);
    const acknowledged = outcomes.filter((o) => o.kind === 'acknowledged');
    await vi.waitFor(() => expectServing(ctx, fast.token, 'redis-after'), { timeout: 20_000, interval: 500 });
    // This Redis keeps nothing across a restart: audit jobs it held, not yet taken by the writer,
    // go with it. Calls acknowledged well before it went away, and calls sent after it came back,
    // must all be audited; those acknowledged in the second before or while it was away are
    // counted and reported.
    const exposed = acknowledged.filter((o) => o.endedAt! >= goneAt - 1_000 && o.startedAt! < backAt);
    const guaranteed = acknowledged.filter((o) => !exposed.includes(o));
    const { rows } = await expectAudited(ctx, fast.id, guaranteed);
    const completed = new Set(
      (await ctx.auditRowsOf(fast.id)).filter((r) => r.status === 'completed').map((r) => String(r.arguments?.n)),
    );
    const lost = exposed.filter((o) => !completed.has(o.n));
    const lostWhileDown = lost.filter((o) => o.endedAt! >= goneAt).length;
    const enqueueErrors = target.services['mcp-gateway'].reduce(
      (sum, s) =>
        sum +
        (s
          .current()
          .output()
          .match(/could not enqueue audit record/g)?.length ?? 0),
      0,
    );
    ctx.summary.push(
      `fault redis: restarted ${target.redis.url} (pid ${oldPid} → ${target.redis.pid()}, no persistence) at t+${restartAt} ms, down ${backAt - goneAt} ms, 4 callers flowing; ` +
        `${outcomes.length} calls: ${acknowledged.length} acknowledged, ${outcomes.length - acknowledged.length} failed cleanly (${tally(outcomes)}), 0 hung; ` +
        `held call: confirm answered ${decided.status}, the hold ${holdOutcome.kind === 'acknowledged' ? 'returned the tool result' : `failed cleanly (${holdOutcome.detail})`}; ` +
        `audit: ${guaranteed.length}/${guaranteed.length} calls acknowledged outside the restart window have a completed row (${rows} rows); ` +
        `of ${exposed.length} acknowledged within 1 s before or during the restart, ${exposed.length - lost.length} audited, ${lost.length} lost ` +
        `(${lost.length - lostWhileDown} acknowledged before Redis stopped, ${lostWhileDown} while it was down; mcp-gateway logged 'could not enqueue audit record' ${enqueueErrors}×)${lost.length ? `: ${lost.map((o) => o.n).join(', ')}` : ''}; serving 10/10 after`,
    );
  }, 120_000);

  describeAuditWriterKill(context);
}

/** An mcp-gateway and a confirmation-hub replica SIGKILLed with work in flight (either replicated topology). */
export function describeReplicaKills(context: () => ReplicaContext): void {
  it('fault: SIGKILL an mcp-gateway replica with calls and holds in flight', async () => {
    const ctx = context();
    const { api, adminToken, target } = ctx;
    const [victim] = target.services['mcp-gateway'];
    const fast = await ctx.agentOnAlpha('fault-mcp', false);
    const careful = await ctx.agentOnAlpha('fault-mcp-held', true);
    const t0 = Date.now();
    const holds = Array.from({ length: 4 }, (_, i) => `mcpkill-hold-${i}`);
    const held = holds.map((marker) =>
      rawToolsCall(
        `${target.baseUrl}/api/v1/mcp/mcp`,
        { authorization: `Bearer ${careful.token}` },
        'a_transfer',
        { marker },
        60_000,
      ),
    );
    const pending = await Promise.all(holds.map((marker) => ctx.pendingWith(marker)));
    const traffic = load(ctx, fast.token, 'a_slow', 'mcpkill', 8);
    await sleep(600);
    const pid = victim.current().pid;
    const killedAt = Date.now() - t0;
    await victim.kill('SIGKILL');
    await sleep(1_500);
    const outcomes = await traffic.stop();
    for (const p of pending)
      expect((await api.post(`/api/v1/confirmation/${p.id}/confirm`, { token: adminToken })).status).toBe(200);
    const holdOutcomes = (await Promise.all(held)).map((answer, i) => classify(holds[i]!, answer));
    expectNoneHung([...outcomes, ...holdOutcomes]);
    const acknowledged = outcomes.filter((o) => o.kind === 'acknowledged');
    expect(acknowledged.length).toBeGreaterThan(0);
    // Holds on the survivor are released by the confirmation; those on the dead replica failed with their connection.
    const released = holdOutcomes.filter((o) => o.kind === 'acknowledged');
    expect(released.length).toBeGreaterThan(0);
    await expectServing(ctx, fast.token, 'mcpkill-after');
    const { rows } = await expectAudited(ctx, fast.id, acknowledged);
    await victim.restart();
    expect(
      (await rawToolsCall(`${victim.url}/api/v1/mcp/mcp`, { authorization: `Bearer ${fast.token}` }, 'a_echo', {
        n: 'restarted',
      })) as Json,
    ).toMatchObject({ status: 200 });
    ctx.summary.push(
      `fault mcp-gateway: SIGKILL ${victim.url} (pid ${pid}) at t+${killedAt} ms with ${holds.length} holds and 8 callers in flight; ` +
        `${outcomes.length} calls: ${acknowledged.length} acknowledged, ${outcomes.length - acknowledged.length} failed cleanly (${tally(outcomes)}), 0 hung; ` +
        `holds: ${released.length} released with the result after confirm, ${holdOutcomes.length - released.length} failed cleanly (${tally(holdOutcomes)}); ` +
        `audit: ${acknowledged.length}/${acknowledged.length} acknowledged calls have a completed row (${rows} rows for the agent); survivor served 10/10; replica restarted`,
    );
  }, 120_000);

  it('fault: SIGKILL a confirmation-hub replica with holds pending and SSE clients connected', async () => {
    const ctx = context();
    const { api, adminToken, target } = ctx;
    const [victim] = target.services['confirmation-hub'];
    const careful = await ctx.agentOnAlpha('fault-hub-held', true);
    const open = () =>
      fetch(`${target.baseUrl}/api/v1/stream`, {
        headers: { authorization: `Bearer ${adminToken}`, accept: 'text/event-stream' },
      });
    const streams = await Promise.all(Array.from({ length: 4 }, async () => new SseEventReader(await open())));
    for (const s of streams) await s.nextOf('connected');
    const t0 = Date.now();
    const holds = Array.from({ length: 4 }, (_, i) => `hubkill-hold-${i}`);
    const held = holds.map((marker) =>
      rawToolsCall(
        `${target.baseUrl}/api/v1/mcp/mcp`,
        { authorization: `Bearer ${careful.token}` },
        'a_transfer',
        { marker },
        60_000,
      ),
    );
    const pending = await Promise.all(holds.map((marker) => ctx.pendingWith(marker)));
    const pid = victim.current().pid;
    const killedAt = Date.now() - t0;
    await victim.kill('SIGKILL');
    for (const p of pending)
      expect((await api.post(`/api/v1/confirmation/${p.id}/confirm`, { token: adminToken })).status).toBe(200);
    const holdOutcomes = (await Promise.all(held)).map((answer, i) => classify(holds[i]!, answer));
    expectNoneHung(holdOutcomes);
    expect(holdOutcomes.map((o) => o.kind)).toEqual(holds.map(() => 'acknowledged'));
    // Streams on the survivor carry the decisions; those on the dead hub ended (a client reconnects).
    const last = pending.at(-1)!.id;
    const fates = await Promise.all(
      streams.map((s) =>
        s
          .nextOf('CONFIRMATION_RESOLVED', 10_000, (d) => (d as Json).id === last)
          .then(
            () => 'alive',
            () => 'ended',
          ),
      ),
    );
    await Promise.all(streams.map((s) => s.close()));
    expect(fates).toContain('alive');
    const again = new SseEventReader(await open());
    await again.nextOf('connected');
    await again.close();
    await victim.restart();
    expect((await fetch(`${victim.url}/health`)).status).toBe(200);
    ctx.summary.push(
      `fault confirmation-hub: SIGKILL ${victim.url} (pid ${pid}) at t+${killedAt} ms with ${holds.length} holds pending and ${streams.length} SSE clients; ` +
        `confirmed through the survivor: ${holdOutcomes.filter((o) => o.kind === 'acknowledged').length}/${holds.length} held calls returned the tool result, 0 hung; ` +
        `SSE: ${fates.filter((f) => f === 'alive').length} streams on the survivor got CONFIRMATION_RESOLVED, ${fates.filter((f) => f === 'ended').length} on the dead hub ended, a reconnect got 'connected'; replica restarted`,
    );
  }, 120_000);
}

/** The audit writer SIGKILLed with calls flowing and restarted: nothing acknowledged lost, nothing written twice. */
export function describeAuditWriterKill(context: () => ReplicaContext): void {
  it('fault: SIGKILL the audit writer with calls flowing, restart it; nothing acknowledged is lost', async () => {
    const ctx = context();
    const writer = ctx.target.services['audit-writer'];
    const fast = await ctx.agentOnAlpha('fault-audit', false);
    const t0 = Date.now();
    const traffic = load(ctx, fast.token, 'a_echo', 'audit', 4);
    await sleep(500);
    const pid = writer.current().pid;
    const killedAt = Date.now() - t0;
    await writer.kill('SIGKILL');
    await sleep(1_500);
    const restartAt = Date.now() - t0;
    await writer.restart();
    await sleep(1_000);
    const outcomes = await traffic.stop();
    expectNoneHung(outcomes);
    const acknowledged = outcomes.filter((o) => o.kind === 'acknowledged');
    // The killed writer's active jobs come back once their BullMQ lock expires (30 s by default), hence the longer wait.
    const { waitedMs } = await expectAudited(ctx, fast.id, acknowledged, 90_000);
    // Exactly once: no call's row written twice by the restarted writer.
    const rowsByCall = new Map<string, number>();
    for (const row of await ctx.auditRowsOf(fast.id))
      rowsByCall.set(String(row.arguments?.n), (rowsByCall.get(String(row.arguments?.n)) ?? 0) + 1);
    expect(
      [...rowsByCall].filter(([, count]) => count > 1),
      'calls with more than one audit row',
    ).toEqual([]);
    const rows = [...rowsByCall.values()].reduce((a, b) => a + b, 0);
    ctx.summary.push(
      `fault audit-writer: SIGKILL (pid ${pid}) at t+${killedAt} ms, restarted at t+${restartAt} ms (pid ${writer.current().pid}), 4 callers flowing; ` +
        `${outcomes.length} calls: ${acknowledged.length} acknowledged, ${outcomes.length - acknowledged.length} failed cleanly (${tally(outcomes)}), 0 hung; ` +
        `audit: ${rows} rows for ${rowsByCall.size} calls (none twice), every acknowledged call completed, all present ${waitedMs} ms after the load stopped`,
    );
  }, 180_000);
}

/**
 * The cluster topology's failover run: the primary serving the audit queue's slot is killed by PID
 * with calls flowing and a call held; its replica is promoted. Nothing acknowledged may be lost
 * (the queue waits for a replica on every enqueue), the decided confirmation stays decided, and
 * every service replica is healthy again by itself.
 */
export function describeClusterFailover(context: () => SuiteContext & { target: ClusterTarget }): void {
  it('failover: kill the Redis primary of the audit queue with calls flowing and a call held; nothing acknowledged is lost', async () => {
    const ctx = context();
    const { api, adminToken, target } = ctx;
    const fast = await ctx.agentOnAlpha('failover', false);
    const careful = await ctx.agentOnAlpha('failover-held', true);
    const held = rawToolsCall(
      `${target.baseUrl}/api/v1/mcp/mcp`,
      { authorization: `Bearer ${careful.token}` },
      'a_transfer',
      { marker: 'failover-hold' },
      60_000,
    );
    const pending = await ctx.pendingWith('failover-hold');
    const traffic = load(ctx, fast.token, 'a_echo', 'failover', 4);
    await sleep(500);
    const primary = await target.cluster.primaryOf('bull:{agentgw-audit-bulk}:agentgw-audit-bulk:id');
    const pid = target.cluster.nodes.find((n) => n.port === primary)?.pid;
    const killedAt = Date.now();
    const { promoted } = await target.cluster.failOver(primary);
    const promotedMs = Date.now() - killedAt;
    await sleep(3_000);
    const outcomes = await traffic.stop();
    const decided = await api.post(`/api/v1/confirmation/${pending.id}/confirm`, { token: adminToken });
    const holdOutcome = classify('failover-hold', await held);
    expectNoneHung([...outcomes, holdOutcome]);
    expect(decided.status).toBe(200);
    const stored = await api.get(`/api/v1/confirmation/${pending.id}`, { token: adminToken });
    expect(['confirmed', 'consumed'], JSON.stringify(stored.body)).toContain(stored.body.data?.status);
    await vi.waitFor(() => expectServing(ctx, fast.token, 'failover-after'), { timeout: 30_000, interval: 500 });
    const replicas = Object.values(target.services).flat();
    await vi.waitFor(
      async () => {
        for (const s of replicas) expect((await fetch(`${s.url}/health`)).status, `${s.app} ${s.url}`).toBe(200);
      },
      { timeout: 30_000, interval: 500 },
    );
    const acknowledged = outcomes.filter((o) => o.kind === 'acknowledged');
    const { rows } = await expectAudited(ctx, fast.id, acknowledged, 60_000);
    ctx.summary.push(
      `failover: Redis primary ${primary} (pid ${pid}, serving the audit queue) killed with 4 callers flowing and a call held, replica ${promoted} promoted after ${promotedMs} ms; ` +
        `${outcomes.length} calls: ${acknowledged.length} acknowledged, ${outcomes.length - acknowledged.length} failed cleanly (${tally(outcomes)}), 0 hung; ` +
        `audit: ${acknowledged.length}/${acknowledged.length} acknowledged calls have a completed row (${rows} rows), lost: 0; ` +
        `held call: confirm answered ${decided.status}, stored ${stored.body.data.status}, the hold ${holdOutcome.kind === 'acknowledged' ? 'returned the tool result' : `failed cleanly (${holdOutcome.detail})`}; ` +
        `${replicas.length}/${replicas.length} service replicas healthy again; serving 10/10 after`,
    );
  }, 180_000);
}
