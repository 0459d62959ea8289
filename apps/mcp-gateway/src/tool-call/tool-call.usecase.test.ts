import { ForbiddenError, type HoldOutcome } from '@agentgw/core';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  FakeCatalog,
  personOf,
  principalOf,
  providerOf,
  recordingTrail,
  scriptedGate,
  spyLogger,
} from './tool-call.fixtures.js';
import { NO_PROVIDER_ACCESS, OUTSIDE_PATTERN } from './tool-access.js';
import type { AllowedCall, ToolCallCommand, ToolCallTarget } from './tool-call.command.js';
import { ToolCallUseCase, type HoldCallOptions } from './tool-call.usecase.js';

const ops = providerOf('ops', 'ops_*');
const fallback = providerOf('any', '*', -1);
let catalog: FakeCatalog;
let trail: ReturnType<typeof recordingTrail>;

beforeEach(() => {
  catalog = new FakeCatalog();
  catalog.providerList = [ops, fallback];
  catalog.agentStates.set('a1', { isActive: true, requireConfirmation: false });
  catalog.reach.add('a1:ops');
  catalog.policy.set('ops_read', { action: 'allow', risk: 'low', rule: true });
  catalog.policy.set('ops_drop', { action: 'require_confirmation', risk: 'critical', rule: true });
  trail = recordingTrail();
});

const useCase = (outcome: HoldOutcome = { decision: 'confirmed', confirmationId: 'c1', confirmedBy: 'boss' }) => {
  const gate = scriptedGate(outcome);
  return { gate, calls: new ToolCallUseCase({ catalog, audit: trail, gate, logger: spyLogger() }) };
};

function command(
  toolName: string,
  target: ToolCallTarget = { kind: 'routed', providerFilter: null, provider: ops },
  over: Partial<ToolCallCommand> = {},
): ToolCallCommand {
  return {
    principal: principalOf(),
    toolName,
    arguments: { n: 1 },
    target,
    alwaysConfirm: false,
    auditId: 'audit-1',
    ...over,
  };
}

describe('decide', () => {
  it('checks provider access and the policy of the provider the name resolved to, and records nothing for an allowed call', async () => {
    const { calls } = useCase();
    expect(await calls.decide(command('ops_read'))).toEqual({
      kind: 'allowed',
      auditId: 'audit-1',
      risk: 'low',
      provider: ops,
      hold: false,
      carriers: ['console', 'push'],
    });
    expect(catalog.reads).toEqual(['reach ops', 'policy ops_read']);
    expect(trail.jobs).toEqual([]);
  });

  it('holds a require_confirmation call, and every call of an agent that wants them all confirmed', async () => {
    const { calls } = useCase();
    expect(await calls.decide(command('ops_drop'))).toMatchObject({ kind: 'allowed', risk: 'critical', hold: true });
    expect(await calls.decide(command('ops_read', undefined, { alwaysConfirm: true }))).toMatchObject({
      kind: 'allowed',
      hold: true,
    });
  });

  it('takes the carriers of the deciding rule (a client opt-in), else console and push', async () => {
    const { calls } = useCase();
    catalog.policy.set('ops_drop', {
      action: 'require_confirmation',
      risk: 'high',
      rule: true,
      carriers: ['console', 'client'],
    });
    expect(await calls.decide(command('ops_drop'))).toMatchObject({ hold: true, carriers: ['console', 'client'] });
    catalog.policy.set('ops_drop', { action: 'require_confirmation', risk: 'high', rule: true });
    expect(await calls.decide(command('ops_drop'))).toMatchObject({ hold: true, carriers: ['console', 'push'] });
  });

  it('a routed call goes to the provider its exposed name resolved to, even where another matches the name first (routing order no longer decides)', async () => {
    const { calls } = useCase();
    catalog.providerList = [providerOf('ops2', 'ops_*', 5), ops, fallback];
    catalog.reach.add('a1:any');
    expect(
      await calls.decide(command('ops_read', { kind: 'routed', providerFilter: null, provider: fallback })),
    ).toMatchObject({ kind: 'allowed', provider: fallback });
    expect(catalog.reads).toEqual(['reach any', 'policy ops_read']);
  });

  it('refuses an agent without provider access: one rejected record with the reason, the policy never asked', async () => {
    const { calls } = useCase();
    catalog.reach.clear();
    expect(await calls.decide(command('ops_read'))).toEqual({
      kind: 'denied',
      auditId: 'audit-1',
      risk: 'high',
      reason: NO_PROVIDER_ACCESS,
    });
    expect(catalog.reads).toEqual(['reach ops']);
    expect(trail.jobs).toEqual([
      {
        op: 'open',
        id: 'audit-1',
        userId: 'u1',
        agentId: 'a1',
        endUserId: 'e1',
        tenantId: 't1',
        providerId: 'ops',
        toolName: 'ops_read',
        arguments: { n: 1 },
        status: 'rejected',
        error: 'no provider access',
      },
    ]);
  });

  it('refuses by policy with the reason (a rule, or nothing allowing it) and the rule’s risk', async () => {
    const { calls } = useCase();
    catalog.policy.set('ops_secret', { action: 'deny', risk: 'medium', rule: true });
    expect(await calls.decide(command('ops_secret'))).toMatchObject({
      kind: 'denied',
      risk: 'medium',
      reason: 'Denied by an access rule',
    });
    expect(await calls.decide(command('ops_unruled', undefined, { auditId: 'audit-2' }))).toMatchObject({
      kind: 'denied',
      risk: 'high',
      reason: 'No access rule allows this tool',
    });
    expect(trail.jobs).toMatchObject([
      { op: 'open', id: 'audit-1', status: 'rejected', error: 'Denied by an access rule' },
      { op: 'open', id: 'audit-2', status: 'rejected', error: 'No access rule allows this tool' },
    ]);
  });

  it('a named provider owns only what its pattern matches; the proxy (which checked access already) is not asked again', async () => {
    const { calls } = useCase();
    expect(await calls.decide(command('delete_all', { kind: 'named', provider: ops }))).toMatchObject({
      kind: 'denied',
      risk: 'high',
      reason: OUTSIDE_PATTERN,
    });
    expect(catalog.reads).toEqual([]);
    expect(await calls.decide(command('ops_read', { kind: 'proxied', provider: ops }))).toMatchObject({
      kind: 'allowed',
      provider: ops,
    });
    expect(catalog.reads).toEqual(['policy ops_read']);
    expect(await calls.decide(command('ops_read', { kind: 'named', provider: ops }))).toMatchObject({
      kind: 'allowed',
      provider: ops,
    });
    expect(catalog.reads).toEqual(['policy ops_read', 'reach ops', 'policy ops_read']);
  });

  it('a user without an agent needs no provider access, only the policy', async () => {
    const { calls } = useCase();
    catalog.reach.clear();
    expect(await calls.decide(command('ops_read', undefined, { principal: personOf() }))).toMatchObject({
      kind: 'allowed',
    });
    expect(catalog.reads).toEqual(['policy ops_read']);
  });
});

describe('open', () => {
  it('opens the pending record with the caller’s identity (user, agent, end user, tenant), the provider and the arguments', async () => {
    const { calls } = useCase();
    const call = command('ops_read');
    await calls.open(call, (await calls.decide(call)) as AllowedCall);
    expect(trail.jobs).toEqual([
      {
        op: 'open',
        id: 'audit-1',
        userId: 'u1',
        agentId: 'a1',
        endUserId: 'e1',
        tenantId: 't1',
        providerId: 'ops',
        toolName: 'ops_read',
        arguments: { n: 1 },
        status: 'pending',
      },
    ]);
  });
});

describe('hold', () => {
  const options = (over: Partial<HoldCallOptions> = {}): HoldCallOptions => ({
    signal: new AbortController().signal,
    confirmationToken: null,
    reauthenticate: async () => principalOf(),
    carrier: null,
    ...over,
  });

  async function held(calls: ToolCallUseCase, call = command('ops_drop')) {
    const decision = await calls.decide(call);
    if (decision.kind !== 'allowed') throw new Error(`not allowed: ${decision.kind}`);
    trail.jobs.length = 0;
    return { call, decision };
  }

  it('a confirmed call is re-checked and released as the caller read anew; the confirmation’s outcome is not written again', async () => {
    const { calls, gate } = useCase();
    const { call, decision } = await held(calls);
    const fresh = principalOf({ email: 'fresh@example.com' });
    expect(await calls.hold(call, decision, options({ reauthenticate: async () => fresh }))).toEqual({
      kind: 'confirmed',
      auditId: 'audit-1',
      risk: 'critical',
      confirmedBy: 'boss',
      principal: fresh,
      provider: ops,
    });
    expect(gate.held).toEqual([
      {
        auditId: 'audit-1',
        agentId: 'a1',
        userId: 'u1',
        endUserId: 'e1',
        tenantId: 't1',
        providerId: 'ops',
        toolName: 'ops_drop',
        arguments: { n: 1 },
        risk: 'critical',
      },
    ]);
    expect(trail.jobs).toEqual([]);
  });

  it('opens the carrier once the confirmation exists, with the held call, and closes it when the hold ends', async () => {
    const { calls } = useCase();
    const { call, decision } = await held(calls);
    const events: string[] = [];
    const carrier = {
      open: (confirmationId: string, heldCall: { auditId: string }) => {
        events.push(`open ${confirmationId} ${heldCall.auditId}`);
        return () => void events.push('close');
      },
    };
    expect(await calls.hold(call, decision, options({ carrier }))).toMatchObject({ kind: 'confirmed' });
    expect(events).toEqual(['open c1 audit-1', 'close']);
  });

  it.each([
    [
      { decision: 'rejected', confirmationId: 'c1', reason: 'not today' },
      { kind: 'rejected', reason: 'not today', confirmationId: 'c1' },
    ],
    [
      { decision: 'timeout', confirmationId: 'c1', reason: 'Request timed out.' },
      { kind: 'timeout', reason: 'Request timed out.', confirmationId: 'c1' },
    ],
    [{ decision: 'expired', confirmationId: 'c1' }, { kind: 'gone' }],
  ] as const)('%o ends as %o, recorded by the confirmation hub alone', async (outcome, expected) => {
    const { calls } = useCase(outcome);
    const { call, decision } = await held(calls);
    expect(await calls.hold(call, decision, options())).toEqual(
      expected.kind === 'gone' ? expected : { ...expected, auditId: 'audit-1', risk: 'critical' },
    );
    expect(trail.jobs).toEqual([]);
  });

  it('a redeemed exact-call token releases without a hold, and the call records it as confirmed (no confirmation decides this record)', async () => {
    const { calls, gate } = useCase();
    const { call, decision } = await held(calls);
    expect(await calls.hold(call, decision, options({ confirmationToken: 'good-token' }))).toMatchObject({
      kind: 'confirmed',
      confirmedBy: null,
    });
    expect(gate.held).toEqual([]);
    expect(gate.redeemed).toHaveLength(1);
    expect(trail.jobs).toEqual([{ op: 'update', id: 'audit-1', status: 'confirmed', confirmedBy: null }]);
  });

  it('a token that does not redeem falls back to a hold', async () => {
    const { calls, gate } = useCase();
    const { call, decision } = await held(calls);
    expect(await calls.hold(call, decision, options({ confirmationToken: 'stale' }))).toMatchObject({
      kind: 'confirmed',
      confirmedBy: 'boss',
    });
    expect(gate.held).toHaveLength(1);
  });

  it('refuses a released call when what holds now says no, recording only the refusal', async () => {
    const { calls } = useCase();
    const { call, decision } = await held(calls);
    catalog.agentStates.set('a1', { isActive: false, requireConfirmation: false });
    expect(await calls.hold(call, decision, options())).toEqual({
      kind: 'denied',
      auditId: 'audit-1',
      risk: 'critical',
      reason: 'Agent is disabled',
    });
    expect(trail.jobs).toEqual([{ op: 'update', id: 'audit-1', status: 'rejected', error: 'Agent is disabled' }]);
  });

  it('refuses when the credentials no longer authenticate, or the provider left the routing set; a provider added in front changes nothing', async () => {
    const { calls } = useCase();
    const { call, decision } = await held(calls);
    const revoked = options({ reauthenticate: () => Promise.reject(new ForbiddenError('API key revoked')) });
    expect(await calls.hold(call, decision, revoked)).toMatchObject({
      kind: 'denied',
      reason: "The caller's credentials no longer hold: API key revoked",
    });
    catalog.providerList = [providerOf('ops2', 'ops_*', 5), ops];
    expect(await calls.hold(call, decision, options())).toMatchObject({ kind: 'confirmed', provider: ops });
    catalog.providerList = [fallback];
    expect(await calls.hold(call, decision, options())).toMatchObject({
      kind: 'denied',
      reason: 'The tool no longer goes to this provider',
    });
  });

  it('a named provider is looked up by id after the release, not routed', async () => {
    const { calls } = useCase();
    const { call, decision } = await held(calls, command('ops_drop', { kind: 'named', provider: ops }));
    catalog.providerList = [providerOf('ops2', 'ops_*', 5), ops];
    expect(await calls.hold(call, decision, options())).toMatchObject({ kind: 'confirmed', provider: ops });
    catalog.providerList = [];
    expect(await calls.hold(call, decision, options())).toMatchObject({
      kind: 'denied',
      reason: 'The tool no longer goes to this provider',
    });
  });
});
