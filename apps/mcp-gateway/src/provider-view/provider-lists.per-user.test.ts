import type { ProviderRecord } from '@agentgw/catalog';
import { ManualClock, MemoryEventBus, silentLogger } from '@agentgw/core';
import { NO_CLIENT_CAPABILITIES, type McpUpstreamClient, type UpstreamTarget } from '@agentgw/mcp-client';
import { describe, expect, it } from 'vitest';
import type { ListAuth, Lister } from './list-items.js';
import { ProviderLists } from './provider-lists.js';

/** An upstream whose tools/list answers by the bearer token it is given (as a protected server does), recording who asked. */
function perTokenClient(toolsOf: Record<string, string[]>) {
  const asked: (string | undefined)[] = [];
  const client = {
    async listAll(target: UpstreamTarget) {
      const token = target.headers?.authorization?.replace('Bearer ', '');
      asked.push(token);
      const tools = token === undefined ? undefined : toolsOf[token];
      if (!tools) throw new Error('upstream answered HTTP 401');
      return { items: tools.map((name) => ({ name })), session: { sessionId: null, protocolVersion: '2025-06-18' } };
    },
  } as unknown as McpUpstreamClient;
  return { asked, client };
}

const provider = { id: 'p1' } as ProviderRecord;
const as = (token: string) => async (): Promise<ListAuth> => ({
  kind: 'target',
  target: { endpoint: 'http://upstream.test/mcp', headers: { authorization: `Bearer ${token}` }, principal: token },
});
const unconnected = async (): Promise<ListAuth> => ({
  kind: 'needs_auth',
  reason: 'Connect crm first',
  authUrl: 'http://gw.test/connect',
});
const names = (list: { items: { name?: unknown }[] | null }) => list.items?.map((item) => item.name);

/** The cache read as per-user listers: (user, their auth) in place of the shared lister. */
const asUsers = (lists: ProviderLists) => {
  const lister = (user: string, authOf: () => Promise<ListAuth>): Lister => ({ user, authOf });
  return {
    get: (
      p: ProviderRecord,
      user: string,
      authOf: () => Promise<ListAuth>,
      kind: 'tools',
      caps: Record<string, unknown>,
    ) => lists.get(p, lister(user, authOf), kind, caps),
    listed: (
      p: ProviderRecord,
      user: string,
      authOf: () => Promise<ListAuth>,
      name: string,
      caps: Record<string, unknown>,
    ) => lists.listed(p, lister(user, authOf), name, caps),
    cachedTools: (providerId: string, user: string, caps: Record<string, unknown>) =>
      lists.cachedTools(providerId, user, caps),
  };
};

async function setUp(toolsOf: Record<string, string[]>) {
  const { asked, client } = perTokenClient(toolsOf);
  const clock = new ManualClock();
  const bus = new MemoryEventBus();
  const lists = new ProviderLists({ client, clock, bus, logger: silentLogger() }, 1_000);
  await lists.start();
  return { asked, clock, bus, lists, users: asUsers(lists) };
}

describe('ProviderLists, per-user listers', () => {
  it("keeps each user's own list, fetched once with their own auth", async () => {
    const { asked, users } = await setUp({ 'tok-a': ['notes'], 'tok-b': ['calendar', 'mail'] });
    expect(names(await users.get(provider, 'alice', as('tok-a'), 'tools', NO_CLIENT_CAPABILITIES))).toEqual(['notes']);
    expect(names(await users.get(provider, 'bob', as('tok-b'), 'tools', NO_CLIENT_CAPABILITIES))).toEqual([
      'calendar',
      'mail',
    ]);
    expect(names(await users.get(provider, 'alice', as('tok-a'), 'tools', NO_CLIENT_CAPABILITIES))).toEqual(['notes']);
    expect(asked).toEqual(['tok-a', 'tok-b']);
    expect(await users.listed(provider, 'bob', as('tok-b'), 'notes', NO_CLIENT_CAPABILITIES)).toEqual({
      kind: 'unlisted',
    });
    expect(await users.listed(provider, 'alice', as('tok-a'), 'notes', NO_CLIENT_CAPABILITIES)).toEqual({
      kind: 'listed',
    });
    expect(users.cachedTools('p1', 'alice', NO_CLIENT_CAPABILITIES)).toEqual([{ name: 'notes' }]);
  });

  it('answers a user without a credential with the connect URL, never asking upstream, until credential.changed names them', async () => {
    const { asked, bus, users } = await setUp({ 'tok-c': ['files'] });
    const list = await users.get(provider, 'carol', unconnected, 'tools', NO_CLIENT_CAPABILITIES);
    expect(list).toMatchObject({
      items: null,
      needsAuth: { reason: 'Connect crm first', authUrl: 'http://gw.test/connect' },
    });
    expect(await users.listed(provider, 'carol', as('tok-c'), 'files', NO_CLIENT_CAPABILITIES)).toMatchObject({
      kind: 'needs_auth',
    });
    expect(asked).toEqual([]);
    await bus.publish('credential.changed', { userId: 'someone-else' });
    expect(await users.get(provider, 'carol', as('tok-c'), 'tools', NO_CLIENT_CAPABILITIES)).toMatchObject({
      needsAuth: { authUrl: 'http://gw.test/connect' },
    });
    await bus.publish('credential.changed', { userId: 'carol' });
    expect(names(await users.get(provider, 'carol', as('tok-c'), 'tools', NO_CLIENT_CAPABILITIES))).toEqual(['files']);
    expect(asked).toEqual(['tok-c']);
  });

  it('asks again after the TTL (5 s for a refusal, 60 s for a list), and at once after providers.changed or list_changed', async () => {
    const { asked, bus, clock, lists, users } = await setUp({ 'tok-a': ['notes'] });
    await users.get(provider, 'carol', unconnected, 'tools', NO_CLIENT_CAPABILITIES);
    clock.advance(5_000);
    expect(names(await users.get(provider, 'carol', as('tok-a'), 'tools', NO_CLIENT_CAPABILITIES))).toEqual(['notes']);
    clock.advance(59_000);
    await users.get(provider, 'carol', as('tok-a'), 'tools', NO_CLIENT_CAPABILITIES);
    expect(asked).toHaveLength(1);
    clock.advance(1_000);
    await users.get(provider, 'carol', as('tok-a'), 'tools', NO_CLIENT_CAPABILITIES);
    expect(asked).toHaveLength(2);
    lists.noticed('p1', 'notifications/tools/list_changed');
    await users.get(provider, 'carol', as('tok-a'), 'tools', NO_CLIENT_CAPABILITIES);
    expect(asked).toHaveLength(3);
    await bus.publish('providers.changed', { providerId: 'p1' });
    await users.get(provider, 'carol', as('tok-a'), 'tools', NO_CLIENT_CAPABILITIES);
    expect(asked).toHaveLength(4);
  });

  it('reports an upstream that refuses the user’s token as unavailable, not as a missing connection', async () => {
    const { users } = await setUp({});
    expect(await users.listed(provider, 'dave', as('revoked'), 'notes', NO_CLIENT_CAPABILITIES)).toEqual({
      kind: 'unavailable',
      failure: 'upstream answered HTTP 401',
      refusal: null,
    });
  });

  it('keeps at most its bound of lists, dropping the least recently used', async () => {
    const { asked, client } = perTokenClient({ u1: [], u2: [], u3: [] });
    const lists = new ProviderLists(
      { client, clock: new ManualClock(), bus: new MemoryEventBus(), logger: silentLogger() },
      1_000,
      2,
    );
    const get = (user: string) => lists.get(provider, { user, authOf: as(user) }, 'tools', NO_CLIENT_CAPABILITIES);
    await get('u1');
    await get('u2');
    await get('u1');
    await get('u3');
    expect(lists.size).toBe(2);
    expect(asked).toHaveLength(3);
    await get('u1');
    expect(asked).toHaveLength(3);
    await get('u2');
    expect(asked).toHaveLength(4);
  });
});
