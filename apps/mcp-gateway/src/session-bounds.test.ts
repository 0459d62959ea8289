import { createVault } from '@agentgw/credentials';
import { createUser, startMcpServer, tokenFor, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { SESSION_LIMITS } from './session-store.js';

// One signed-in user used to keep every session it opened for 24 h (1,101 initialize → 1,101
// sessions). Now each caller holds at most SESSION_LIMITS.maxPerOwner; past it the least recently
// used goes, its upstream sessions are ended, and a request on it is a 404 (the client re-initializes).
// A per-user provider's upstream session of an evicted session used to be left to expire: it is
// now ended as the caller whose initialize evicted it (it was theirs), with their own credential.

const redisUrl = process.env.TEST_REDIS_URL;
const stores = redisUrl ? (['in-process', 'redis'] as const) : (['in-process'] as const);

describe.each(stores)('sessions bounded per caller (%s store)', (store) => {
  let gw: GatewayUnderTest;
  let upstream: McpFixture;
  /** A per-user provider's upstream: each user's calls carry their own key (`user_key`), carol's alone accepted. */
  let keyed: McpFixture;
  let keyedProvider: string;
  let alice: string;
  let bob: string;
  let carol: string;
  const CAROLS_KEY = 'key-of-carol';

  beforeAll(async () => {
    upstream = await startMcpServer({ name: 'stateful', tools: [{ name: 'echo', handler: () => 'ok' }] });
    keyed = await startMcpServer({
      name: 'keyed',
      auth: { apiKey: CAROLS_KEY },
      tools: [{ name: 'whoami', handler: () => 'carol' }],
    });
    gw = await startGatewayUnderTest(store === 'redis' ? { env: { REDIS_URL: redisUrl! } } : {});
    await gw.catalog.providers.create(gw.admin, {
      name: 'stateful',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'none',
      priority: 0,
    });
    const perUser = {
      name: 'keyed',
      pattern: 'whoami',
      endpoint: keyed.url,
      authType: 'user_key',
      credentialServiceType: 'keyed',
      priority: 0,
    } as const;
    keyedProvider = (await gw.catalog.providers.create(gw.admin, perUser)).id;
    const tokens: string[] = [];
    for (const name of ['alice', 'bob', 'carol']) {
      const user = await createUser(gw.deps, {
        email: `${name}-${store}-${Date.now()}@example.com`,
        roles: ['agent_creator'],
      });
      await gw.catalog.rules.create(gw.admin, {
        subjectType: 'user',
        subjectId: user.id,
        providerId: '*',
        action: 'allow',
        toolPattern: '*',
      });
      if (name === 'carol')
        await createVault(gw.deps).store({
          userId: user.id,
          tenantId: null,
          serviceType: 'keyed',
          kind: 'api_key',
          secret: CAROLS_KEY,
          expiresAt: null,
        });
      tokens.push(await tokenFor(gw.deps, user));
    }
    [alice, bob, carol] = tokens as [string, string, string];
  });

  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
    await keyed?.close();
  });

  const post = (token: string, body: unknown, headers: Record<string, string> = {}, path = '/api/v1/mcp/mcp') =>
    fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json',
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const initialize = async (token: string, path?: string) => {
    const res = await post(
      token,
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      {},
      path,
    );
    expect(res.status).toBe(200);
    return res.headers.get('mcp-session-id')!;
  };
  const on = (sid: string) => ({ 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });

  it(`initialize number ${SESSION_LIMITS.maxPerOwner + 1} evicts the caller's least recently used session, ends its upstream session, and leaves others alone`, async () => {
    const first = await initialize(alice);
    const call = await post(
      alice,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } },
      on(first),
    );
    expect(call.status).toBe(200);
    const upstreamSession = upstream.requests.at(-1)!.headers['mcp-session-id'];
    expect(typeof upstreamSession).toBe('string');
    const bobs = await initialize(bob);

    const later: string[] = [];
    for (let i = 0; i < SESSION_LIMITS.maxPerOwner; i++) later.push(await initialize(alice));

    const evicted = await post(alice, { jsonrpc: '2.0', id: 2, method: 'ping' }, on(first));
    expect(evicted.status).toBe(404);
    expect(await evicted.json()).toMatchObject({ error: { code: -32001 } });
    await vi.waitFor(() =>
      expect(
        upstream.requests.some((r) => r.method === 'DELETE' && r.headers['mcp-session-id'] === upstreamSession),
      ).toBe(true),
    );
    for (const sid of [...later, bobs])
      expect((await post(sid === bobs ? bob : alice, { jsonrpc: '2.0', id: 3, method: 'ping' }, on(sid))).status).toBe(
        200,
      );
  });

  it(`initialize number ${SESSION_LIMITS.maxPerOwner + 1} ends the evicted session's per-user upstream session as its user, with their own key`, async () => {
    const proxy = `/api/v1/mcp-proxy/${keyedProvider}/mcp`;
    const first = await initialize(carol, proxy);
    const call = await post(
      carol,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      on(first),
      proxy,
    );
    expect(await call.json()).toMatchObject({ result: { content: [{ text: 'carol' }] } });
    const upstreamSession = keyed.requests.at(-1)!.headers['mcp-session-id'];
    expect(typeof upstreamSession).toBe('string');

    for (let i = 0; i < SESSION_LIMITS.maxPerOwner; i++) await initialize(carol);

    expect((await post(carol, { jsonrpc: '2.0', id: 2, method: 'ping' }, on(first), proxy)).status).toBe(404);
    const ended = () =>
      keyed.requests.filter((r) => r.method === 'DELETE' && r.headers['mcp-session-id'] === upstreamSession);
    await vi.waitFor(() => expect(ended()).toHaveLength(1));
    expect(ended()[0]!.headers['x-api-key']).toBe(CAROLS_KEY);
  });
});
