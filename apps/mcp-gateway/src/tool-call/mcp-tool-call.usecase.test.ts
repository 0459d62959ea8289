import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { ManualClock, type HoldOutcome } from '@agentgw/core';
import type { JsonRpcNotification } from '@agentgw/mcp-client';
import { beforeEach, describe, expect, it } from 'vitest';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import type { ListerToolListing, ProviderList } from '../provider-view/list-items.js';
import type { CallerProviders } from '../provider-view/caller-providers.js';
import { ClientGone, RpcError } from '../rpc-errors.js';
import type { ToolNaming } from '../tool-names/tool-naming.js';
import type { ToolPins } from '../tool-pins/tool-pins.js';
import type { CallerAuth } from '../upstream-auth/caller-auth.js';
import { UpstreamAnswer, type ForwardedCall } from '../upstream-forwarding.js';
import { FakeCatalog, principalOf, providerOf, recordingTrail, scriptedGate, spyLogger } from './tool-call.fixtures.js';
import type { ClientCarrier } from './client-carrier.js';
import { McpToolCall } from './mcp-tool-call.usecase.js';
import { ToolCallUseCase } from './tool-call.usecase.js';

const ops = providerOf('ops', 'ops_*');
const crm = { ...providerOf('crm', 'crm_*'), authType: 'user_oauth' as const, credentialServiceType: 'crm' };

/** The caller's view of providers as the test sets it: listings, auth and quarantines per provider. */
class FakeView {
  listing = new Map<string, ListerToolListing>();
  auth = new Map<string, CallerAuth>();
  /** Per-user providers the caller must connect first (nothing listed for them). */
  unconnected = new Set<string>();
  forgotten: string[] = [];
  /** Read once after a needs_auth listing was forgotten: the caller connected meanwhile. */
  afterForget: ListerToolListing | null = null;

  readonly view = {
    routingSet: async () => [ops, crm],
    list: async (provider: ProviderRecord): Promise<ProviderList> => ({
      items: this.unconnected.has(provider.id) ? null : [{ name: 'ops_read' }, { name: 'ops_drop' }],
      failure: null,
      refusal: null,
      needsAuth: this.unconnected.has(provider.id) ? { reason: 'connect', authUrl: 'https://gw.test/c' } : null,
    }),
    mustConnect: async (provider: ProviderRecord) => this.unconnected.has(provider.id),
    listed: async (provider: ProviderRecord): Promise<ListerToolListing> => {
      if (this.forgotten.includes(provider.id) && this.afterForget) return this.afterForget;
      return this.listing.get(provider.id) ?? { kind: 'listed' };
    },
    forgetCallerLists: (provider: ProviderRecord) => (this.forgotten.push(provider.id), provider.id === 'crm'),
    cachedTools: () => [],
    auth: async (provider: ProviderRecord): Promise<CallerAuth> => this.auth.get(provider.id) ?? { kind: 'none' },
  } as unknown as CallerProviders;
}

let catalog: FakeCatalog;
let trail: ReturnType<typeof recordingTrail>;
let fake: FakeView;
let quarantined: Set<string>;
let forwarded: { provider: string; params: McpResult; principal: Principal; call: ForwardedCall }[];
let answer: () => Promise<McpResult>;

beforeEach(() => {
  catalog = new FakeCatalog();
  catalog.providerList = [ops, crm];
  catalog.agentStates.set('a1', { isActive: true, requireConfirmation: false });
  catalog.reach.add('a1:ops');
  catalog.reach.add('a1:crm');
  catalog.policy.set('ops_read', { action: 'allow', risk: 'low', rule: true });
  catalog.policy.set('crm_notes', { action: 'allow', risk: 'low', rule: true });
  catalog.policy.set('ops_drop', { action: 'require_confirmation', risk: 'critical', rule: true });
  trail = recordingTrail();
  fake = new FakeView();
  quarantined = new Set();
  forwarded = [];
  answer = async () => ({ content: [{ type: 'text', text: 'ok' }] });
});

/** The use case over fakes: the real decision, hold and records, a fake view, names, pins and upstream. */
function toolCallUnderTest(
  outcome: HoldOutcome = { decision: 'confirmed', confirmationId: 'c1', confirmedBy: 'boss' },
  carrier: ClientCarrier | null = null,
) {
  const gate = scriptedGate(outcome);
  const names = {
    resolveExposedName: async (_scope: unknown, routing: ProviderRecord[], name: string) =>
      name === 'ops__read' ? { provider: routing[0], upstreamName: 'ops_read' } : null,
  } as unknown as ToolNaming;
  const pins = {
    quarantineOf: async (_p: ProviderRecord, _tools: unknown, name: string) =>
      quarantined.has(name) ? 'changed' : null,
  } as unknown as ToolPins;
  const toolCall = new McpToolCall({
    calls: new ToolCallUseCase({ catalog, audit: trail, gate, logger: spyLogger() }),
    view: fake.view,
    names,
    pins,
    clock: new ManualClock(),
    carrier,
    rounds: null,
    tasks: null,
    forward: async (provider, params, ctx, call) => {
      forwarded.push({ provider: provider.id, params, principal: ctx.principal, call });
      return call.recorded(answer());
    },
  });
  return { gate, toolCall };
}

function contextOf(over: Partial<McpRequestContext> = {}): McpRequestContext & { sent: JsonRpcNotification[] } {
  const sent: JsonRpcNotification[] = [];
  return {
    principal: principalOf(),
    requestId: 'r1',
    endpoint: { kind: 'unified', providerFilter: null, toolsParam: null },
    protocolVersion: '2025-06-18',
    session: null,
    signal: new AbortController().signal,
    notify: (n) => void sent.push(n),
    confirmationToken: null,
    progressToken: 'p1',
    reauthenticate: async () => principalOf(),
    clientCapabilities: {},
    channel: null,
    headers: new Headers(),
    sent,
    ...over,
  };
}

const proxied = (provider: ProviderRecord) => ({ kind: 'proxied' as const, provider });
const statuses = () => trail.jobs.map((job) => `${job.op}:${job.status}`);
const rpcOf = (err: unknown) => (err instanceof RpcError ? { ...err.toObject(), status: err.status } : err);
const refusedWith = async (promise: Promise<unknown>) =>
  rpcOf(
    await promise.then(
      () => null,
      (err: unknown) => err,
    ),
  );

describe('McpToolCall: exposed name', () => {
  it('resolves an exposed name and forwards the call under the upstream name, recorded pending then completed', async () => {
    const { toolCall } = toolCallUnderTest();
    const result = await toolCall.callExposed({ name: 'ops__read', arguments: { a: 1 } }, contextOf(), false, null);
    expect(result).toEqual({ content: [{ type: 'text', text: 'ok' }] });
    expect(forwarded).toMatchObject([{ provider: 'ops', params: { name: 'ops_read', arguments: { a: 1 } } }]);
    expect(statuses()).toEqual(['open:pending', 'update:completed']);
    // Its outcome follows in moments: the create may wait for it (one record per call).
    expect(trail.timings).toEqual(['with-outcome']);
  });

  it('answers an unknown name -32602 and records nothing', async () => {
    const { toolCall } = toolCallUnderTest();
    expect(await refusedWith(toolCall.callExposed({ name: 'nope' }, contextOf(), false, null))).toMatchObject({
      code: -32602,
      message: 'Unknown tool: nope',
    });
    expect(trail.jobs).toEqual([]);
  });

  it('sends a name an unconnected per-user provider claims to it, refused there with the connect URL (audited)', async () => {
    fake.unconnected.add('crm');
    fake.listing.set('crm', { kind: 'needs_auth', needsAuth: { reason: 'connect', authUrl: 'https://gw.test/c' } });
    fake.auth.set('crm', {
      kind: 'refused',
      refusal: { kind: 'missing', serviceType: 'crm', authUrl: 'https://gw.test/c' },
    });
    const { toolCall } = toolCallUnderTest();
    expect(await refusedWith(toolCall.callExposed({ name: 'crm_notes' }, contextOf(), false, null))).toMatchObject({
      code: -32003,
      data: { code: 'CREDENTIALS_REQUIRED', authUrl: 'https://gw.test/c' },
    });
    expect(statuses()).toEqual(['open:rejected']);
    expect(forwarded).toEqual([]);
  });
});

describe('McpToolCall: before the call opens', () => {
  it('refuses a missing name or non-object arguments -32602', async () => {
    const { toolCall } = toolCallUnderTest();
    expect(await refusedWith(toolCall.call({}, contextOf(), false, proxied(ops)))).toMatchObject({ code: -32602 });
    expect(
      await refusedWith(toolCall.call({ name: 'ops_read', arguments: [1] }, contextOf(), false, proxied(ops))),
    ).toMatchObject({ code: -32602, message: 'params.arguments must be an object' });
  });

  it('answers a denial 403 with its audit id, recorded rejected', async () => {
    const { toolCall } = toolCallUnderTest();
    const refused = await refusedWith(toolCall.call({ name: 'ops_secret' }, contextOf(), false, proxied(ops)));
    expect(refused).toMatchObject({ code: -32003, status: 403, data: { decision: 'denied' } });
    expect(statuses()).toEqual(['open:rejected']);
  });

  it('refuses a name the provider does not list, and a provider whose list cannot be had (502) or is refused by egress (403)', async () => {
    const { toolCall } = toolCallUnderTest();
    fake.listing.set('ops', { kind: 'unlisted' });
    expect(await refusedWith(toolCall.call({ name: 'ops_read' }, contextOf(), false, proxied(ops)))).toMatchObject({
      code: -32602,
      message: 'Unknown tool: ops_read',
    });
    fake.listing.set('ops', { kind: 'unavailable', failure: 'down', refusal: null });
    expect(await refusedWith(toolCall.call({ name: 'ops_read' }, contextOf(), false, proxied(ops)))).toMatchObject({
      status: 502,
      data: { providerId: 'ops', reason: 'down' },
    });
    const refusal = Object.assign(new Error('private address'), { code: 'EGRESS_REFUSED', details: {} });
    fake.listing.set('ops', { kind: 'unavailable', failure: 'refused', refusal: refusal as never });
    expect(await refusedWith(toolCall.call({ name: 'ops_read' }, contextOf(), false, proxied(ops)))).toMatchObject({
      status: 403,
      data: { code: 'EGRESS_REFUSED' },
    });
    expect(forwarded).toEqual([]);
  });

  it('lists a per-user provider anew once when the caller connected since their list was cached', async () => {
    fake.listing.set('crm', { kind: 'needs_auth', needsAuth: { reason: 'connect', authUrl: null } });
    fake.auth.set('crm', { kind: 'headers', headers: { authorization: 'Bearer u1' } });
    fake.afterForget = { kind: 'listed' };
    const { toolCall } = toolCallUnderTest();
    await toolCall.call({ name: 'crm_notes' }, contextOf(), false, proxied(crm));
    expect(fake.forgotten).toEqual(['crm']);
    expect(forwarded).toMatchObject([{ provider: 'crm', call: { paramHeaders: { authorization: 'Bearer u1' } } }]);
  });

  it('answers 502 when the per-user list still needs auth after the one retry', async () => {
    fake.listing.set('crm', { kind: 'needs_auth', needsAuth: { reason: 'still not', authUrl: null } });
    fake.auth.set('crm', { kind: 'headers', headers: { authorization: 'Bearer u1' } });
    const { toolCall } = toolCallUnderTest();
    expect(await refusedWith(toolCall.call({ name: 'crm_notes' }, contextOf(), false, proxied(crm)))).toMatchObject({
      status: 502,
      data: { reason: 'still not' },
    });
    expect(fake.forgotten).toEqual(['crm']);
  });

  it('refuses a quarantined tool 403 TOOL_QUARANTINED, recorded rejected', async () => {
    quarantined.add('ops_read');
    const { toolCall } = toolCallUnderTest();
    expect(await refusedWith(toolCall.call({ name: 'ops_read' }, contextOf(), false, proxied(ops)))).toMatchObject({
      status: 403,
      data: { code: 'TOOL_QUARANTINED', status: 'changed' },
    });
    expect(statuses()).toEqual(['open:rejected']);
  });

  it("refuses a caller without the user's auth (recorded), and sends a settings gap on without it", async () => {
    fake.auth.set('crm', {
      kind: 'refused',
      refusal: { kind: 'exchange', reason: 'no token', code: 'SIGN_IN_TOKEN_REQUIRED' },
    });
    const { toolCall } = toolCallUnderTest();
    expect(await refusedWith(toolCall.call({ name: 'crm_notes' }, contextOf(), false, proxied(crm)))).toMatchObject({
      status: 403,
      data: { code: 'SIGN_IN_TOKEN_REQUIRED', auditId: expect.any(String) },
    });
    expect(statuses()).toEqual(['open:rejected']);
    fake.auth.set('crm', { kind: 'refused', refusal: { kind: 'unconfigured', missing: 'service_type' } });
    await toolCall.call({ name: 'crm_notes' }, contextOf(), false, proxied(crm));
    expect(forwarded).toMatchObject([{ provider: 'crm', call: { paramHeaders: null } }]);
  });
});

describe('McpToolCall: held, then released or not', () => {
  it('holds a call that must be confirmed, reports its status on the stream, and forwards it as the released principal once confirmed', async () => {
    fake.auth.set('ops', { kind: 'headers', headers: { authorization: 'Bearer fresh' } });
    const { gate, toolCall } = toolCallUnderTest();
    const ctx = contextOf();
    await toolCall.call({ name: 'ops_drop' }, ctx, false, proxied(ops));
    expect(gate.held).toHaveLength(1);
    expect(forwarded).toMatchObject([{ provider: 'ops', call: { paramHeaders: { authorization: 'Bearer fresh' } } }]);
    expect(statuses()).toEqual(['open:pending', 'update:completed']);
    // A held call's pending record leaves at once: it is there while a human decides.
    expect(trail.timings).toEqual(['now']);
  });

  it('asks the client carrier about a held call only (with its decision), opened while held and closed before forwarding', async () => {
    const events: string[] = [];
    const carrier = {
      forCall: (_ctx: McpRequestContext, allowed: { carriers: readonly string[] }) => {
        events.push(`for ${allowed.carriers.join('+')}`);
        return {
          open: (id: string) => (
            events.push(`open ${id}`),
            () => void events.push(`close, forwarded ${forwarded.length}`)
          ),
        };
      },
    } as unknown as ClientCarrier;
    const { toolCall } = toolCallUnderTest(undefined, carrier);
    await toolCall.call({ name: 'ops_read' }, contextOf(), false, proxied(ops));
    expect(events).toEqual([]);
    await toolCall.call({ name: 'ops_drop' }, contextOf(), false, proxied(ops));
    expect(events).toEqual(['for console+push', 'open c1', 'close, forwarded 1']);
  });

  it('forwards an agent that always confirms only after the hold', async () => {
    const { gate, toolCall } = toolCallUnderTest();
    await toolCall.call({ name: 'ops_read' }, contextOf(), true, proxied(ops));
    expect(gate.held).toHaveLength(1);
    expect(forwarded).toHaveLength(1);
  });

  it('answers a rejected or timed-out hold -32004 with its confirmation id, never forwarded', async () => {
    const { toolCall } = toolCallUnderTest({ decision: 'rejected', confirmationId: 'c9', reason: 'no' });
    expect(await refusedWith(toolCall.call({ name: 'ops_drop' }, contextOf(), false, proxied(ops)))).toMatchObject({
      code: -32004,
      data: { decision: 'rejected', confirmationId: 'c9' },
    });
    expect(forwarded).toEqual([]);
  });

  it('ends quietly (ClientGone) when the caller left while held', async () => {
    const { toolCall } = toolCallUnderTest({ decision: 'expired' } as HoldOutcome);
    await expect(toolCall.call({ name: 'ops_drop' }, contextOf(), false, proxied(ops))).rejects.toBeInstanceOf(
      ClientGone,
    );
    expect(forwarded).toEqual([]);
  });

  it('answers a call the re-check refuses after release as a denial', async () => {
    const { toolCall } = toolCallUnderTest();
    const ctx = contextOf({ reauthenticate: async () => principalOf({ userId: 'someone-else' }) });
    expect(await refusedWith(toolCall.call({ name: 'ops_drop' }, ctx, false, proxied(ops)))).toMatchObject({
      code: -32003,
      data: { reason: 'The caller changed while the call was held' },
    });
    expect(statuses()).toEqual(['open:pending', 'update:rejected']);
  });

  it("reads the user's auth again after release: one revoked meanwhile is refused and recorded on the held record", async () => {
    fake.auth.set('ops', { kind: 'headers', headers: { authorization: 'Bearer before' } });
    const { toolCall } = toolCallUnderTest();
    const ctx = contextOf({
      reauthenticate: async () => {
        fake.auth.set('ops', { kind: 'refused', refusal: { kind: 'no_user', serviceType: 'ops' } });
        return principalOf();
      },
    });
    expect(await refusedWith(toolCall.call({ name: 'ops_drop' }, ctx, false, proxied(ops)))).toMatchObject({
      data: { code: 'USER_REQUIRED' },
    });
    expect(statuses()).toEqual(['open:pending', 'update:rejected']);
    expect(forwarded).toEqual([]);
  });
});

describe('McpToolCall: outcome', () => {
  it('records an isError result as failed and passes it on', async () => {
    answer = async () => ({ isError: true, content: [] });
    const { toolCall } = toolCallUnderTest();
    expect(await toolCall.call({ name: 'ops_read' }, contextOf(), false, proxied(ops))).toEqual({
      isError: true,
      content: [],
    });
    expect(trail.jobs.at(-1)).toMatchObject({ op: 'update', status: 'failed' });
  });

  it("records an upstream's JSON-RPC error as failed with its message, and passes the error on", async () => {
    const upstream = new UpstreamAnswer({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'boom' } }, 200);
    answer = () => Promise.reject(upstream);
    const { toolCall } = toolCallUnderTest();
    await expect(toolCall.call({ name: 'ops_read' }, contextOf(), false, proxied(ops))).rejects.toBe(upstream);
    expect(trail.jobs.at(-1)).toMatchObject({ op: 'update', status: 'failed', error: 'boom' });
  });
});
