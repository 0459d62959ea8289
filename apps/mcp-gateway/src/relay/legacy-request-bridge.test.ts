import type { AuditTrail } from '@agentgw/audit';
import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { randomUUID } from 'node:crypto';
import {
  connectRedis,
  ManualClock,
  MemoryEventBus,
  RedisEventBus,
  type EventBus,
  type Logger,
  type RedisConnection,
} from '@agentgw/core';
import { testClusterTarget } from '@agentgw/core/local-redis-cluster';
import type { JsonRpcResponse, UpstreamTarget } from '@agentgw/mcp-client';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import { RpcError } from '../rpc-errors.js';
import { MemoryBridgeStore, RedisBridgeStore, type BridgeEvent, type BridgeStore } from './bridge-store.js';
import type { BridgeFailure } from './bridgeable-call.js';
import { LegacyRequestBridge } from './legacy-request-bridge.js';
import { MAX_BRIDGED_ROUNDS } from './mrtr-bridge.js';
import { EXPIRY_GRACE_MS, type RelayLimits } from './relay-contract.js';
import { MemoryRelayStore, RedisRelayStore } from './relay-store.js';
import { ServerRequestRelay } from './server-request-relay.js';

/**
 * The bridge as two replicas run it: replica A runs the legacy upstream's call and answers the
 * 2026-07-28 client with a round; the retry reaches replica B, which delivers the answer upstream
 * and waits for the call's end through the shared stores and bus (Redis when TEST_REDIS_URL is
 * set, else one in-process store and bus standing in for them). The upstream is a stand-in whose
 * call ends when it is answered.
 */
const redisUrl = process.env.TEST_REDIS_URL;
const redis = redisUrl ? new Redis(redisUrl) : null;
const buses: EventBus[] = [];
const clusterConnections: RedisConnection[] = [];
afterAll(async () => {
  await Promise.all(buses.map((bus) => bus.close()));
  await Promise.all(clusterConnections.map((connection) => connection.quit()));
  await redis?.quit();
});

const provider = { id: 'prov-1', endpoint: 'http://127.0.0.1:9/mcp', authType: 'none' } as unknown as ProviderRecord;
const principalOf = (userId: string) =>
  ({ userId, agentId: 'a1', endUserId: null, tenantId: null, email: null, roles: [] }) as unknown as Principal;
const silent = { warn: () => undefined, error: () => undefined } as unknown as Logger;
const session = { protocolVersion: '2025-11-25', sessionId: 'up-session' };
const target: UpstreamTarget = { endpoint: provider.endpoint, headers: {} };
const LIMITS: RelayLimits = { maxPendingPerClient: 2, timeoutMs: 60_000, answerFallbackMs: 60_000 };
const failureOf = (err: unknown): BridgeFailure =>
  err instanceof RpcError
    ? { error: err.toObject(), status: err.status }
    : { error: { code: -1, message: '?' }, status: 500 };

/** A 2026-07-28 client's request context (no stream, sampling declared) as `userId`. */
const contextOf = (userId: string): McpRequestContext =>
  ({
    principal: principalOf(userId),
    requestId: 'r1',
    protocolVersion: '2026-07-28',
    session: null,
    signal: new AbortController().signal,
    clientCapabilities: { sampling: {} },
    channel: null,
    headers: new Headers(),
  }) as unknown as McpRequestContext;

/** Two replicas (relay + bridge each) over one relay store, bridge store and bus; `answered` gets what reached the upstream. */
function replicas(limits: RelayLimits = LIMITS, bridgeLimits: RelayLimits = limits) {
  const clock = new ManualClock();
  const relayStore = redis ? new RedisRelayStore(redis, clock) : new MemoryRelayStore(clock);
  const store: BridgeStore = redis ? new RedisBridgeStore(redis, clock) : new MemoryBridgeStore(clock);
  const prefix = `test-${randomUUID()}`;
  const [busA, busB]: [EventBus, EventBus] = redisUrl
    ? [new RedisEventBus({ url: redisUrl, prefix }), new RedisEventBus({ url: redisUrl, prefix })]
    : ((bus) => [bus, bus])(new MemoryEventBus());
  buses.push(busA, busB);
  const answered: JsonRpcResponse[] = [];
  const audit: AuditTrail = { open: async () => `audit-${randomUUID()}`, update: async () => undefined };
  const make = (bus: EventBus) => {
    const relay = new ServerRequestRelay(
      {
        store: relayStore,
        client: { respond: async (_t, _s, response) => void answered.push(response) },
        catalog: { providers: { get: async () => provider } } as never,
        targets: { forRequest: async () => target },
        audit,
        logger: silent,
        bus,
      },
      limits,
    );
    return { relay, bridge: new LegacyRequestBridge({ store, relay, bus, logger: silent }, bridgeLimits) };
  };
  // A user of its own: a shared Redis keeps other tests' (and runs') entries under theirs.
  const user = `u-${randomUUID()}`;
  return { a: make(busA), b: make(busB), clock, store, answered, user, ctx: contextOf(user) };
}

type Replica = ReturnType<typeof replicas>['a'];

/**
 * A call of `user` on `replica` whose upstream asks `questions` sampling requests one by one (the
 * next once the last is answered, ids `<name>-<n>`), each after a notification, then ends with `end`;
 * the notifications that reach the client go to `notified`.
 */
function upstreamCall(
  {
    replica,
    answered,
    user,
    notified = [],
  }: { replica: Replica; answered: JsonRpcResponse[]; user: string; notified?: string[] },
  questions: number,
  end: () => McpResult = () => ({ content: [{ type: 'text', text: `answers: ${answered.length}` }] }),
  name = 'up',
) {
  const call = replica.bridge.forRequest(contextOf(user), 'tools/call')!;
  const origin = {
    provider,
    target,
    principal: principalOf(user),
    channel: call.channel,
    capabilities: { sampling: {} },
    call: { auditId: 'call-audit', toolName: 'ask_model' },
  };
  const notify = call.whileAnswering((notification: string) => notified.push(notification))!;
  const upstream = (async () => {
    for (let asked = 0; asked < questions; asked++) {
      const id = `${name}-${asked}`;
      notify(`asking ${asked}`);
      replica.relay.relay(
        origin,
        { jsonrpc: '2.0', id, method: 'sampling/createMessage', params: { n: asked } },
        session,
      );
      while (!answered.some((r) => r.id === id)) {
        if (call.signal.aborted) throw new RpcError(-32010, 'cancelled', 502);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    notify('ending');
    return end();
  })();
  return call.answer(call.explained(upstream), failureOf);
}

const SAMPLED = { role: 'assistant', model: 'm', content: { type: 'text', text: 'Paris' } };
const keyOf = (round: McpResult) => Object.keys(round.inputRequests as object)[0]!;
const retry = (round: McpResult, answers: Record<string, unknown> = { [keyOf(round)]: SAMPLED }) => ({
  name: 'ask_model',
  inputResponses: answers,
  requestState: round.requestState,
});

describe('LegacyRequestBridge across replicas', () => {
  it('answers with a round on A; the retry on B delivers the answer upstream and gets the call’s end', async () => {
    const { a, b, answered, user, ctx } = replicas();
    const round = await upstreamCall({ replica: a, answered, user }, 1);
    expect(round).toMatchObject({
      resultType: 'input_required',
      inputRequests: { [keyOf(round)]: { method: 'sampling/createMessage', params: { n: 0 } } },
    });
    const end = await b.bridge.resume('tools/call', retry(round), ctx);
    expect(answered).toEqual([{ jsonrpc: '2.0', id: 'up-0', result: SAMPLED }]);
    expect(end).toEqual({ content: [{ type: 'text', text: 'answers: 1' }] });
    await Promise.all([a.bridge.stop(), b.bridge.stop(), a.relay.stop(), b.relay.stop()]);
  });

  it('asks round after round, alternating replicas, and passes the upstream’s failure on with its status', async () => {
    const { a, b, answered, user, ctx } = replicas();
    const failing = () => {
      throw new RpcError(-32010, 'The provider could not be reached', 502);
    };
    let round = await upstreamCall({ replica: a, answered, user }, 3, failing);
    round = await b.bridge.resume('tools/call', retry(round), ctx);
    round = await a.bridge.resume('tools/call', retry(round), ctx);
    expect(round.inputRequests).toMatchObject({ [keyOf(round)]: { params: { n: 2 } } });
    await expect(b.bridge.resume('tools/call', retry(round), ctx)).rejects.toMatchObject({
      code: -32010,
      status: 502,
    });
    expect(answered.map((r) => r.id)).toEqual(['up-0', 'up-1', 'up-2']);
  });

  it('refuses (-32602) another client’s retry, another method, and any retry once the call has expired', async () => {
    const { a, b, answered, clock, user, ctx } = replicas();
    const round = await upstreamCall({ replica: a, answered, user }, 1);
    await expect(b.bridge.resume('tools/call', retry(round), contextOf(`${user}-other`))).rejects.toMatchObject({
      code: -32602,
    });
    await expect(b.bridge.resume('prompts/get', retry(round), ctx)).rejects.toMatchObject({ code: -32602 });
    clock.advance(LIMITS.timeoutMs + EXPIRY_GRACE_MS);
    await expect(b.bridge.resume('tools/call', retry(round), ctx)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/expired/),
    });
    expect(answered).toEqual([]);
  });

  it(`ends a call whose upstream asks more than ${MAX_BRIDGED_ROUNDS} questions, cancelling it upstream`, async () => {
    const { a, answered, user, ctx } = replicas({ ...LIMITS, maxPendingPerClient: 100 });
    let round = await upstreamCall({ replica: a, answered, user }, MAX_BRIDGED_ROUNDS + 1);
    for (let asked = 1; asked < MAX_BRIDGED_ROUNDS; asked++)
      round = await a.bridge.resume('tools/call', retry(round), ctx);
    await expect(a.bridge.resume('tools/call', retry(round), ctx)).rejects.toMatchObject({
      code: -32010,
      message: `The provider asked more than ${MAX_BRIDGED_ROUNDS} questions in one call`,
    });
  });

  it('refuses a first round past the client’s bound of calls waiting for input, cancelling the call upstream', async () => {
    const { a, answered, user } = replicas(LIMITS, { ...LIMITS, maxPendingPerClient: 1 });
    await upstreamCall({ replica: a, answered, user }, 1);
    await expect(upstreamCall({ replica: a, answered, user }, 1, undefined, 'second')).rejects.toMatchObject({
      status: 429,
      message: 'The client has 1 calls waiting for its input already',
    });
  });

  it('answers a call whose upstream answers without asking as it is, its notifications passed on', async () => {
    const { a, answered, user } = replicas();
    const notified: string[] = [];
    expect(await upstreamCall({ replica: a, answered, user, notified }, 0)).toEqual({
      content: [{ type: 'text', text: 'answers: 0' }],
    });
    expect(notified).toEqual(['ending']);
  });

  it('passes the upstream’s notifications on only until a round answers the client’s request (that exchange is over)', async () => {
    const { a, b, answered, user, ctx } = replicas();
    const notified: string[] = [];
    const round = await upstreamCall({ replica: a, answered, user, notified }, 2);
    const next = await b.bridge.resume('tools/call', retry(round), ctx);
    await b.bridge.resume('tools/call', retry(next), ctx);
    expect(notified).toEqual(['asking 0']);
  });
});

describe('bridge stores', () => {
  const asked = (id: string): BridgeEvent => ({ kind: 'asked', id, method: 'roots/list' });
  const contract = (name: string, make: (clock: ManualClock) => BridgeStore) =>
    it(`${name}: bounded per owner, read only by its owner, events drained once in order, expiring`, async () => {
      const clock = new ManualClock();
      const store = make(clock);
      const [owner, other] = [`p:${randomUUID()}`, `p:${randomUUID()}`];
      const [one, two] = [randomUUID(), randomUUID()];
      expect(await store.open(one, { owner, method: 'tools/call' }, 1_000, 1)).toBe(true);
      expect(await store.open(two, { owner, method: 'tools/call' }, 1_000, 1)).toBe(false);
      expect(await store.open(two, { owner: other, method: 'tools/call' }, 1_000, 1)).toBe(true);
      expect(await store.callOf(other, one)).toBeNull();
      expect(await store.callOf(owner, one)).toEqual({ owner, method: 'tools/call' });
      await store.push(one, asked('x'), 1_000);
      await store.push(one, { kind: 'result', result: { ok: true } }, 1_000);
      expect(await store.drain(one)).toEqual([asked('x'), { kind: 'result', result: { ok: true } }]);
      expect(await store.drain(one)).toEqual([]);
      await store.close(owner, one);
      expect(await store.callOf(owner, one)).toBeNull();
      clock.advance(1_000);
      expect(await store.callOf(other, two)).toBeNull();
      expect(await store.open(randomUUID(), { owner: other, method: 'tools/call' }, 1_000, 1)).toBe(true);
    });
  contract('MemoryBridgeStore', (clock) => new MemoryBridgeStore(clock));
  if (redis) contract('RedisBridgeStore', (clock) => new RedisBridgeStore(redis, clock));
  const cluster = testClusterTarget();
  if (cluster)
    contract('RedisBridgeStore on a Redis Cluster', (clock) => {
      const connection = connectRedis(cluster);
      clusterConnections.push(connection);
      return new RedisBridgeStore(connection, clock);
    });
});
