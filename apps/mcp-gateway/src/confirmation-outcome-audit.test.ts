import { createAuditTrail, type AuditOpenEntry, type AuditPatch, type AuditTrail } from '@agentgw/audit';
import {
  createConfirmationGate,
  decideConfirmation,
  maxPendingOf,
  type ConfirmationGateHandle,
} from '@agentgw/confirmations';
import type { ConfirmationGate } from '@agentgw/core';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { statelessRpc } from './stateless-rpc.js';

// Issue 20.1, one writer per audit fact: how a held call's confirmation ended is recorded by the
// confirmation state machine (on whichever replica decides), never a second time by the waiting call.
let gw: GatewayUnderTest;
let upstream: McpFixture;
let gateHandle: ConfirmationGateHandle;
let audit: AuditTrail;
let runtimeToken: string;
/** Every job the gateway and the confirmation state machine enqueued, in order. */
const jobs: (({ op: 'open' } & AuditOpenEntry) | ({ op: 'update'; id: string } & AuditPatch))[] = [];

/** The gateway holds calls through the real gate, made once the gateway's deps exist. */
const gate: ConfirmationGate = {
  hold: (call, options) => gateHandle.hold(call, options),
  redeem: (token, call) => gateHandle.redeem(token, call),
};

beforeAll(async () => {
  upstream = await startMcpServer({ name: 'ops', tools: [{ name: 'risky', handler: () => 'risky done' }] });
  gw = await startGatewayUnderTest({
    gate,
    audit: (deps) => {
      const real = createAuditTrail({ queue: deps.queue, clock: deps.clock });
      return (audit = {
        open: (entry) => (jobs.push({ op: 'open', ...entry }), real.open(entry)),
        update: (id, patch) => (jobs.push({ op: 'update', id, ...patch }), real.update(id, patch)),
      });
    },
  });
  gateHandle = createConfirmationGate(
    { ...gw.deps, audit },
    { timeoutMs: 60_000, maxPending: maxPendingOf(gw.deps.config) },
  );
  const { catalog, admin } = gw;
  const provider = await catalog.providers.create(admin, {
    name: 'ops',
    pattern: '*',
    endpoint: upstream.url,
    authType: 'none',
    priority: 0,
  });
  const created = await catalog.agents.create(admin, { name: 'bot', upstreamUrl: 'http://127.0.0.1:9/agent' });
  runtimeToken = created.runtimeToken;
  await catalog.rules.create(admin, {
    subjectType: 'agent',
    subjectId: created.agent.id,
    providerId: provider.id,
    action: 'require_confirmation',
    toolPattern: 'risky',
  });
});

afterAll(async () => {
  await gateHandle?.close();
  await gw?.close();
  await upstream?.close();
});

/** Sends a risky tools/call, waits until it is held, answers its confirmation as the admin, and returns the reply and the audit id. */
async function heldCall(answer: { confirmed: boolean; reason?: string }) {
  // JSON only: the held call's status notifications need a stream, this test reads the one answer.
  const reply = statelessRpc(
    `${gw.url}/api/v1/mcp/mcp`,
    { authorization: `Bearer ${runtimeToken}`, accept: 'application/json' },
    'tools/call',
    { name: 'risky', arguments: {} },
  );
  const pending = () =>
    gw.deps.db
      .selectFrom('confirmations')
      .select(['id', 'audit_id'])
      .where('status', '=', 'pending')
      .executeTakeFirst();
  await expect.poll(pending).toBeTruthy();
  const { id, audit_id: auditId } = (await pending())!;
  await decideConfirmation({ ...gw.deps, audit }, id, { ...answer, decidedBy: gw.admin.userId, via: 'console' });
  return { reply: await reply, auditId: auditId! };
}

const updatesOf = (auditId: string): AuditPatch[] =>
  jobs.flatMap(({ op, ...job }) => (op === 'update' && job.id === auditId ? [job] : []));

describe('the outcome of a held call’s confirmation has one writer', () => {
  it('approved: confirmed and by whom is written once (by the state machine); the call writes its opening and its outcome', async () => {
    const { reply, auditId } = await heldCall({ confirmed: true });
    expect(reply.body.result).toMatchObject({ content: [{ text: 'risky done' }] });
    await expect.poll(() => updatesOf(auditId).some((u) => u.status === 'completed')).toBe(true);
    expect(jobs.filter((j) => j.op === 'open' && j.id === auditId)).toMatchObject([
      { status: 'pending', toolName: 'risky' },
    ]);
    expect(updatesOf(auditId).filter((u) => u.confirmedBy !== undefined)).toStrictEqual([
      {
        id: auditId,
        status: 'confirmed',
        confirmedBy: gw.admin.userId,
        decidedVia: { carrier: 'console', clientId: null },
      },
    ]);
  });

  it('rejected: the rejection and its reason are written once, and the call is answered 403 with them', async () => {
    const { reply, auditId } = await heldCall({ confirmed: false, reason: 'not today' });
    expect(reply.status).toBe(403);
    expect(reply.body.error).toMatchObject({ data: { decision: 'rejected', reason: 'not today', auditId } });
    expect(updatesOf(auditId)).toStrictEqual([
      { id: auditId, status: 'rejected', error: 'not today', decidedVia: { carrier: 'console', clientId: null } },
    ]);
  });
});
