import type { AuditTrail } from '@agentgw/audit';
import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { randomUUID } from 'node:crypto';
import { ManualClock, MemoryEventBus, RedisEventBus, type EventBus, type Logger } from '@agentgw/core';
import { McpUpstreamClient, type JsonRpcRequest } from '@agentgw/mcp-client';
import { replyJson, startRecordingUpstream, type RecordingUpstream } from '@agentgw/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialResolver } from '@agentgw/credentials';
import { RequestTargets } from '../upstream-auth/request-targets.js';
import { UserCredentials } from '../upstream-auth/user-credentials.js';
import { upstreamTarget } from '../upstream-targets.js';
import { MemoryRelayStore, RedisRelayStore, type RelayStore } from './relay-store.js';
import {
  clientOwner,
  RELAY_ID_PREFIX,
  type ClientChannel,
  type RelayLimits,
  type RelayOrigin,
} from './relay-contract.js';
import { ServerRequestRelay } from './server-request-relay.js';

/**
 * The relay as two replicas run it: one relays an upstream's request to its client, the other
 * receives the client's answer and posts it to the upstream itself, through the shared store
 * and bus (Redis, a bus connection per replica, when TEST_REDIS_URL is set; else one in-process
 * store and bus standing in for them).
 */
const redisUrl = process.env.TEST_REDIS_URL;
let upstream: RecordingUpstream;
let client: McpUpstreamClient;
let redis: Redis | null = null;
const provider = { id: 'prov-1', endpoint: '', authType: 'bearer', pattern: '*' } as unknown as ProviderRecord;
const principal = {
  userId: 'u1',
  agentId: 'a1',
  endUserId: null,
  tenantId: null,
  email: null,
  roles: [],
} as unknown as Principal;
const silent = { warn: () => undefined, error: () => undefined } as unknown as Logger;
const session = { protocolVersion: '2025-11-25', sessionId: 'up-session' };
const never = (): never => {
  throw new Error('no token exchange here');
};

beforeAll(async () => {
  upstream = await startRecordingUpstream((_req, res) => replyJson(res, 202, {}));
  (provider as { endpoint: string }).endpoint = `${upstream.url}/mcp`;
  client = new McpUpstreamClient();
  if (redisUrl) redis = new Redis(redisUrl);
});
const buses: EventBus[] = [];
afterAll(async () => {
  await client.destroy();
  await upstream.close();
  await Promise.all(buses.map((bus) => bus.close()));
  await redis?.quit();
});

/** Each replica's bus: Redis pub/sub on one channel prefix when there is Redis, else one in-process bus for both. */
function replicaBuses(): [EventBus, EventBus] {
  const prefix = `test-${randomUUID()}`;
  const made: [EventBus, EventBus] = redisUrl
    ? [new RedisEventBus({ url: redisUrl, prefix }), new RedisEventBus({ url: redisUrl, prefix })]
    : ((bus) => [bus, bus])(new MemoryEventBus());
  buses.push(...made);
  return made;
}

/** A bus that loses every message (pub/sub is at-most-once). */
const losingBus: Pick<EventBus, 'publish' | 'subscribe'> = {
  publish: async () => undefined,
  subscribe: async () => async () => undefined,
};

interface ReplicaOptions {
  limits?: Partial<RelayLimits>;
  /** The provider answers go to. */
  served?: ProviderRecord;
  /** Each user's own token for it. */
  vault?: Record<string, string>;
  /** Whether replica B's announcements of answers are lost. */
  lossy?: boolean;
}

/** Two relay replicas over one store and bus; the waiting calls re-read the store every minute unless told (`limits` to change). */
function replicas({ limits = {}, served = provider, vault = {}, lossy = false }: ReplicaOptions = {}) {
  const clock = new ManualClock();
  const store: RelayStore = redis ? new RedisRelayStore(redis, clock) : new MemoryRelayStore(clock);
  const audits: unknown[] = [];
  const audit: AuditTrail = {
    open: async (e) => (audits.push({ open: e }), `audit-${audits.length}`),
    update: async (id, patch) => void audits.push({ update: id, ...patch }),
  };
  const catalog = {
    providers: {
      get: async () => served,
      authSecret: (p: ProviderRecord) => (p.authType === 'bearer' ? 'secret' : null),
    },
  } as never;
  // The vault: a user's token when they have one, else the connect URL (a shared-auth provider never asks).
  const resolver: CredentialResolver = {
    resolve: async ({ userId, serviceTypes }) =>
      vault[userId] === undefined
        ? {
            credentials: {},
            missing: serviceTypes,
            authUrls: Object.fromEntries(serviceTypes.map((t) => [t, 'https://gw.test/connect'])),
          }
        : { credentials: Object.fromEntries(serviceTypes.map((t) => [t, vault[userId]!])), missing: [], authUrls: {} },
  };
  const targets = new RequestTargets({
    catalog,
    userCredentials: new UserCredentials(() => resolver),
    exchange: () => never(),
  });
  const [busOfA, busOfB] = replicaBuses();
  const make = (bus: Pick<EventBus, 'publish' | 'subscribe'>) =>
    new ServerRequestRelay(
      { store, client, catalog, targets, audit, logger: silent, bus },
      { maxPendingPerClient: 2, timeoutMs: 60_000, answerFallbackMs: 60_000, ...limits },
    );
  return { a: make(busOfA), b: make(lossy ? losingBus : busOfB), audits };
}

const sent: JsonRpcRequest[] = [];
const origin = (
  owner: string,
  capabilities: Record<string, unknown> = { sampling: {} },
): RelayOrigin & { channel: ClientChannel } => ({
  provider,
  target: upstreamTarget(provider, 'secret', null),
  principal,
  channel: { owner, send: (r) => sent.push(r) },
  capabilities,
  call: { auditId: 'call-audit', toolName: 'ask_model' },
});
const postedTo = (id: unknown) =>
  upstream.requests
    .filter((r) => (r.body as { id?: unknown }).id === id)
    .map((r) => ({ body: r.body, session: r.headers['mcp-session-id'], auth: r.headers.authorization }));
const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
};
/** The bound of a test that waits to be woken: far below the minute a waiter goes without re-reading unless told. */
const WOKEN_WITHIN_MS = 10_000;

describe('ServerRequestRelay across replicas', () => {
  it('relays on replica A under a minted id; the answer reaching replica B goes to the upstream session with the upstream id, audited once', async () => {
    const { a, b, audits } = replicas();
    const owner = clientOwner(`sid-${Date.now()}`, principal);
    const before = sent.length;
    a.relay(
      origin(owner),
      { jsonrpc: '2.0', id: 'up-7', method: 'sampling/createMessage', params: { maxTokens: 3 } },
      session,
    );
    await until(() => sent.length > before);
    const relayed = sent.at(-1)!;
    expect(relayed).toMatchObject({ jsonrpc: '2.0', method: 'sampling/createMessage', params: { maxTokens: 3 } });
    expect(String(relayed.id).startsWith(RELAY_ID_PREFIX)).toBe(true);
    // Another client cannot answer it; its own answer (to replica B) is delivered once.
    expect(
      await b.deliver(
        clientOwner('someone-else', principal),
        { principal, requestId: 'req-1', headers: new Headers() },
        [{ jsonrpc: '2.0', id: relayed.id, result: { forged: true } }],
      ),
    ).toBe(1);
    expect(
      await b.deliver(owner, { principal, requestId: 'req-2', headers: new Headers() }, [
        { jsonrpc: '2.0', id: relayed.id, result: { role: 'assistant' } },
      ]),
    ).toBe(0);
    expect(
      await b.deliver(owner, { principal, requestId: 'req-3', headers: new Headers() }, [
        { jsonrpc: '2.0', id: relayed.id, result: { role: 'again' } },
      ]),
    ).toBe(1);
    expect(postedTo('up-7')).toEqual([
      {
        body: { jsonrpc: '2.0', id: 'up-7', result: { role: 'assistant' } },
        session: 'up-session',
        auth: 'Bearer secret',
      },
    ]);
    expect(audits).toEqual([
      {
        open: expect.objectContaining({
          toolName: 'sampling/createMessage',
          providerId: 'prov-1',
          status: 'pending',
          arguments: { relayedFor: 'call-audit', tool: 'ask_model', params: { maxTokens: 3 } },
        }),
      },
      { update: 'audit-1', status: 'completed', result: { role: 'assistant' } },
    ]);
    await a.stop();
  });

  it("answers a per-user provider with the answering user's own token, and sends nothing for a user who has none", async () => {
    const perUser = {
      ...provider,
      id: 'prov-user',
      authType: 'user_oauth',
      credentialServiceType: 'crm',
    } as ProviderRecord;
    const { a, b } = replicas({ served: perUser, vault: { u1: 'token-of-u1' } });
    const ask = async (who: Principal, upstreamId: string) => {
      const owner = clientOwner(`sid-${Date.now()}-${upstreamId}`, who);
      const before = sent.length;
      a.relay(
        { ...origin(owner), provider: perUser, principal: who },
        { jsonrpc: '2.0', id: upstreamId, method: 'sampling/createMessage', params: {} },
        session,
      );
      await until(() => sent.length > before);
      return { owner, id: sent.at(-1)!.id };
    };
    const mine = await ask(principal, 'up-u1');
    expect(
      await b.deliver(mine.owner, { principal, requestId: 'req-u1', headers: new Headers() }, [
        { jsonrpc: '2.0', id: mine.id, result: { role: 'assistant' } },
      ]),
    ).toBe(0);
    expect(postedTo('up-u1')).toEqual([
      {
        body: { jsonrpc: '2.0', id: 'up-u1', result: { role: 'assistant' } },
        session: 'up-session',
        auth: 'Bearer token-of-u1',
      },
    ]);

    const stranger = { ...principal, userId: 'u2' } as Principal;
    const theirs = await ask(stranger, 'up-u2');
    expect(
      await b.deliver(theirs.owner, { principal: stranger, requestId: 'req-u2', headers: new Headers() }, [
        { jsonrpc: '2.0', id: theirs.id, result: {} },
      ]),
    ).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(postedTo('up-u2')).toEqual([]);
    await a.stop();
  });

  it('answers the upstream at once when the client did not declare the capability, asked for something unknown, or has too many pending; pings itself', async () => {
    const { a } = replicas({ limits: { maxPendingPerClient: 1 } });
    const owner = clientOwner(`sid-${Date.now()}-b`, principal);
    a.relay(origin(owner, {}), { jsonrpc: '2.0', id: 'no-cap', method: 'elicitation/create', params: {} }, session);
    a.relay(origin(owner), { jsonrpc: '2.0', id: 'odd', method: 'tools/call', params: {} }, session);
    a.relay(origin(owner), { jsonrpc: '2.0', id: 'ping-1', method: 'ping' }, session);
    const roots = { roots: { listChanged: true } };
    a.relay(origin(owner, roots), { jsonrpc: '2.0', id: 'first', method: 'roots/list' }, session);
    await until(() => sent.some((r) => r.method === 'roots/list'));
    a.relay(origin(owner, roots), { jsonrpc: '2.0', id: 'second', method: 'roots/list' }, session);
    await until(() => ['no-cap', 'odd', 'ping-1', 'second'].every((id) => postedTo(id).length === 1));
    expect(postedTo('no-cap')[0]!.body).toMatchObject({
      error: { code: -32601, message: 'The client did not declare elicitation' },
    });
    expect(postedTo('odd')[0]!.body).toMatchObject({
      error: { code: -32601, message: 'Method not found: tools/call' },
    });
    expect(postedTo('ping-1')[0]!.body).toEqual({ jsonrpc: '2.0', id: 'ping-1', result: {} });
    expect(postedTo('second')[0]!.body).toMatchObject({
      error: { message: 'The client has 1 server requests pending already' },
    });
    await a.stop();
  });

  it('says truthfully why a client answered as plain JSON gets no server request, even one it declared', async () => {
    const { a } = replicas();
    const streamless = { ...origin(clientOwner(`sid-${Date.now()}-json`, principal)), channel: null };
    const before = sent.length;
    a.relay(streamless, { jsonrpc: '2.0', id: 'modern-1', method: 'sampling/createMessage', params: {} }, session);
    await until(() => postedTo('modern-1').length === 1);
    expect(postedTo('modern-1')[0]!.body).toMatchObject({
      error: {
        code: -32601,
        message: 'The client asked for a plain JSON answer to this request, so sampling/createMessage cannot reach it',
      },
    });
    expect(sent.length).toBe(before);
    await a.stop();
  });

  it('answers the upstream with a timeout error when the client never answers', async () => {
    const { a } = replicas({ limits: { timeoutMs: 20 } });
    const owner = clientOwner(`sid-${Date.now()}-c`, principal);
    a.relay(origin(owner), { jsonrpc: '2.0', id: 'slow-1', method: 'sampling/createMessage', params: {} }, session);
    await until(() => postedTo('slow-1').length === 1);
    expect(postedTo('slow-1')[0]!.body).toMatchObject({
      id: 'slow-1',
      error: { code: -32001, message: 'The client did not answer in time' },
    });
  });

  it(
    'a question the gateway asks on replica A is answered as soon as the client answers on replica B, told over the bus',
    async () => {
      const { a, b, audits } = replicas();
      const owner = clientOwner(`sid-${Date.now()}-ask`, principal);
      const before = sent.length;
      const asked = a.ask(
        origin(owner),
        { method: 'elicitation/create', params: { message: 'Which?' } },
        new AbortController().signal,
      );
      await until(() => sent.length > before);
      const question = sent.at(-1)!;
      expect(question).toMatchObject({ method: 'elicitation/create', params: { message: 'Which?' } });
      const answer = { jsonrpc: '2.0' as const, id: question.id, result: { action: 'accept', content: { pick: 'b' } } };
      expect(await b.deliver(owner, { principal, requestId: 'req-ask', headers: new Headers() }, [answer])).toBe(0);
      expect(await asked).toEqual({ kind: 'answered', response: answer });
      expect(audits).toEqual([
        expect.objectContaining({ open: expect.objectContaining({ toolName: 'elicitation/create' }) }),
        { update: 'audit-1', status: 'completed', result: answer.result },
      ]);
      await Promise.all([a.stop(), b.stop()]);
    },
    WOKEN_WITHIN_MS,
  );

  it(
    'still finds an answer whose announcement was lost, at its fallback read',
    async () => {
      const { a, b } = replicas({ lossy: true, limits: { answerFallbackMs: 50 } });
      const owner = clientOwner(`sid-${Date.now()}-lost`, principal);
      const before = sent.length;
      const asked = a.ask(origin(owner), { method: 'roots/list' }, new AbortController().signal);
      await until(() => sent.length > before);
      const answer = { jsonrpc: '2.0' as const, id: sent.at(-1)!.id, result: { roots: [] } };
      expect(await b.deliver(owner, { principal, requestId: 'req-lost', headers: new Headers() }, [answer])).toBe(0);
      expect(await asked).toEqual({ kind: 'answered', response: answer });
      await a.stop();
    },
    WOKEN_WITHIN_MS,
  );

  it(
    'ends a waiting question at once when its client goes away, and a later answer finds nothing',
    async () => {
      const { a, b } = replicas();
      const owner = clientOwner(`sid-${Date.now()}-gone`, principal);
      const gone = new AbortController();
      const before = sent.length;
      const asked = a.ask(origin(owner), { method: 'roots/list' }, gone.signal);
      await until(() => sent.length > before);
      gone.abort();
      expect(await asked).toEqual({ kind: 'gone' });
      expect(
        await b.deliver(owner, { principal, requestId: 'req-late', headers: new Headers() }, [
          { jsonrpc: '2.0', id: sent.at(-1)!.id, result: { roots: [] } },
        ]),
      ).toBe(1);
      await a.stop();
    },
    WOKEN_WITHIN_MS,
  );
});
