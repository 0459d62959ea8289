import type { ConfirmationGate, HeldCall, HoldOutcome } from '@agentgw/core';
import { createUser, startMcpServer, tokenFor, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { statelessRpc, type RpcReply } from './stateless-rpc.js';
import { recordingAuditTrail, type RecordedAudit } from './testing/recorded-audits.js';
import { createRuleBoundAgent } from './testing/rule-bound-agents.js';

// Issue 19.4: a held call is forwarded only if, once a human approves it, the caller and the
// policy still allow it (kill switch, rule changes, revoked users, rotated runtime tokens).
let gw: GatewayUnderTest;
let upstream: McpFixture;
let ids: { provider: string; agent: string; riskyRule: string };
let runtimeToken: string;
const audits: RecordedAudit[] = [];
/** Held calls waiting for the test to decide them. */
const waiting: { call: HeldCall; decide: (outcome: HoldOutcome) => void }[] = [];
/** Runs inside `redeem` before it answers true: something that changes while a token is redeemed. */
let duringRedeem: () => Promise<void> = async () => undefined;

const gate: ConfirmationGate = {
  hold: (call) => new Promise((decide) => waiting.push({ call, decide })),
  async redeem(token) {
    if (token !== 'approved-token') return false;
    await duringRedeem();
    return true;
  },
};

const unified = () => `${gw.url}/api/v1/mcp/mcp`;
const bearer = () => ({ authorization: `Bearer ${runtimeToken}` });
const confirmed: HoldOutcome = { decision: 'confirmed', confirmationId: 'c1', confirmedBy: 'boss' };

/** Starts a request, waits until the gateway holds it, runs `meanwhile`, approves, and returns the answer. */
async function approveAfter<T>(send: () => Promise<T>, meanwhile: () => Promise<unknown>): Promise<T> {
  const before = waiting.length;
  const answer = send();
  // A wait, not a timing check: the first call of a run lists the upstream cold, which a loaded CI machine took over 5 s for.
  await expect.poll(() => waiting.length).toBe(before + 1);
  await meanwhile();
  waiting[before]!.decide(confirmed);
  return answer;
}

function expectRefusedAfterApproval(reply: RpcReply, expected: string | RegExp) {
  const reason = typeof expected === 'string' ? expected : expect.stringMatching(expected);
  expect(reply.status).toBe(403);
  expect(reply.body.error).toMatchObject({ code: -32003, data: { decision: 'denied', reason } });
  const auditId = reply.body.error!.data!.auditId as string;
  expect(audits).toContainEqual({ id: auditId, patch: { status: 'rejected', error: reason } });
  // Who confirmed is the confirmation hub's fact (the fake gate stands in for it): the call does not write it again.
  expect(audits.filter((a) => a.id === auditId && a.patch?.confirmedBy !== undefined)).toEqual([]);
}

beforeAll(async () => {
  upstream = await startMcpServer({ name: 'ops', tools: [{ name: 'risky', handler: () => 'risky done' }] });
  gw = await startGatewayUnderTest({ gate, audit: () => recordingAuditTrail(audits) });
  const { catalog, admin } = gw;
  const provider = await catalog.providers.create(admin, {
    name: 'ops',
    pattern: '*',
    endpoint: upstream.url,
    authType: 'none',
    priority: 0,
  });
  const agent = await createRuleBoundAgent(gw, {
    rules: [
      { providerId: provider.id, action: 'require_confirmation', toolPattern: 'risky' },
      // Another allow-class rule keeps the agent's access to the provider when the risky one turns to deny.
      { providerId: provider.id, action: 'allow', toolPattern: 'safe_*' },
    ],
  });
  runtimeToken = agent.runtimeToken;
  ids = { provider: provider.id, agent: agent.agentId, riskyRule: agent.ruleIds[0]! };
});

afterAll(async () => {
  for (const w of waiting) w.decide({ decision: 'rejected', confirmationId: 'c1', reason: 'test over' });
  await gw?.close();
  await upstream?.close();
});

beforeEach(() => {
  upstream.calls.length = 0;
  duringRedeem = async () => undefined;
});

describe('a held call is re-checked once approved (MCP)', () => {
  it('forwards an approved call when nothing changed', async () => {
    const reply = await approveAfter(
      () => statelessRpc(unified(), bearer(), 'tools/call', { name: 'risky', arguments: {} }),
      async () => undefined,
    );
    expect(reply.body.result).toMatchObject({ content: [{ text: 'risky done' }] });
    expect(upstream.calls).toHaveLength(1);
  });

  it('refuses with 403 when the agent was disabled while the call was held, and never calls the upstream', async () => {
    try {
      const reply = await approveAfter(
        () => statelessRpc(unified(), bearer(), 'tools/call', { name: 'risky', arguments: {} }),
        () => gw.catalog.agents.setActive(gw.admin, ids.agent, false),
      );
      expectRefusedAfterApproval(reply, /Agent is disabled/);
      expect(upstream.calls).toEqual([]);
    } finally {
      await gw.catalog.agents.setActive(gw.admin, ids.agent, true);
    }
  });

  it('refuses with 403 when the rule was turned to deny while the call was held (proxy too)', async () => {
    try {
      const reply = await approveAfter(
        () =>
          statelessRpc(`${gw.url}/api/v1/mcp-proxy/${ids.provider}/mcp`, bearer(), 'tools/call', {
            name: 'risky',
            arguments: {},
          }),
        () => gw.catalog.rules.update(gw.admin, ids.riskyRule, { action: 'deny' }),
      );
      expectRefusedAfterApproval(reply, 'Denied by an access rule');
      expect(upstream.calls).toEqual([]);
    } finally {
      await gw.catalog.rules.update(gw.admin, ids.riskyRule, { action: 'require_confirmation' });
    }
  });

  it('refuses when the runtime token was rotated while the call was held', async () => {
    const reply = await approveAfter(
      () => statelessRpc(unified(), bearer(), 'tools/call', { name: 'risky', arguments: {} }),
      async () => (runtimeToken = await gw.catalog.agents.regenerateToken(gw.admin, ids.agent)),
    );
    expectRefusedAfterApproval(reply, /credentials no longer hold: Invalid runtime token/);
    expect(upstream.calls).toEqual([]);
  });

  it('refuses when the acting user was deleted while the call was held', async () => {
    const user = await createUser(gw.deps, { email: `held-${Date.now()}@example.com` });
    const token = await tokenFor(gw.deps, user);
    const rule = await gw.catalog.rules.create(gw.admin, {
      subjectType: 'user',
      subjectId: user.id,
      providerId: ids.provider,
      action: 'require_confirmation',
      toolPattern: 'risky',
    });
    try {
      const reply = await approveAfter(
        () =>
          statelessRpc(unified(), { authorization: `Bearer ${token}` }, 'tools/call', { name: 'risky', arguments: {} }),
        async () => {
          await gw.deps.db.deleteFrom('users').where('id', '=', user.id).execute();
          await gw.deps.bus.publish('user.changed', { userId: user.id });
        },
      );
      expectRefusedAfterApproval(reply, /credentials no longer hold: User no longer exists/);
      expect(upstream.calls).toEqual([]);
    } finally {
      await gw.catalog.rules.delete(gw.admin, rule.id);
    }
  });

  it('re-checks a redeemed confirmation token the same way', async () => {
    duringRedeem = () => gw.catalog.agents.setActive(gw.admin, ids.agent, false).then(() => undefined);
    try {
      const reply = await statelessRpc(
        unified(),
        { ...bearer(), 'x-confirmation-token': 'approved-token' },
        'tools/call',
        { name: 'risky', arguments: {} },
      );
      expect(reply.status).toBe(403);
      expect(reply.body.error).toMatchObject({ code: -32003, data: { reason: 'Agent is disabled' } });
      expect(upstream.calls).toEqual([]);
    } finally {
      duringRedeem = async () => undefined;
      await gw.catalog.agents.setActive(gw.admin, ids.agent, true);
    }
    const reply = await statelessRpc(
      unified(),
      { ...bearer(), 'x-confirmation-token': 'approved-token' },
      'tools/call',
      { name: 'risky', arguments: {} },
    );
    expect(reply.body).toMatchObject({ result: { content: [{ text: 'risky done' }] } });
  });
});

describe('a held call is re-checked once approved (tool gate)', () => {
  const evaluate = async () => {
    const res = await fetch(`${gw.url}/api/v1/tool-gate/evaluate`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ toolName: 'risky', providerId: ids.provider }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('answers confirmed when nothing changed, denied when the agent was disabled or the rule turned to deny', async () => {
    expect((await approveAfter(evaluate, async () => undefined)).body).toMatchObject({
      decision: 'confirmed',
      confirmedBy: 'boss',
    });
    try {
      const disabled = await approveAfter(evaluate, () => gw.catalog.agents.setActive(gw.admin, ids.agent, false));
      expect(disabled).toMatchObject({ status: 200, body: { decision: 'denied', reason: 'Agent is disabled' } });
      expect(audits).toContainEqual({
        id: disabled.body.auditId,
        patch: expect.objectContaining({ status: 'rejected', error: 'Agent is disabled' }),
      });
    } finally {
      await gw.catalog.agents.setActive(gw.admin, ids.agent, true);
    }
    try {
      const denied = await approveAfter(evaluate, () =>
        gw.catalog.rules.update(gw.admin, ids.riskyRule, { action: 'deny' }),
      );
      expect(denied.body).toMatchObject({ decision: 'denied', reason: 'Denied by an access rule' });
    } finally {
      await gw.catalog.rules.update(gw.admin, ids.riskyRule, { action: 'require_confirmation' });
    }
  });
});
