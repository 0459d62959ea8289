import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import type { CredentialResolution, CredentialResolver, TokenExchange } from '@agentgw/credentials';
import type { McpUpstreamClient, UpstreamSession, UpstreamTarget } from '@agentgw/mcp-client';
import { ManualClock, MemoryEventBus } from '@agentgw/core';
import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../memory-session-store.js';
import { personOf, providerOf } from '../tool-call/tool-call.fixtures.js';
import { RequestTargets } from '../upstream-auth/request-targets.js';
import { UserCredentials } from '../upstream-auth/user-credentials.js';
import { closeUpstreams, dropEvicted } from './session-end.js';

const shared: ProviderRecord = { ...providerOf('shared', '*'), authType: 'bearer' };
const perUser: ProviderRecord = { ...providerOf('crm', '*'), authType: 'user_oauth', credentialServiceType: 'crm' };
const upstreams: Record<string, UpstreamSession> = {
  shared: { protocolVersion: '2025-11-25', sessionId: 'up-shared' },
  crm: { protocolVersion: '2025-11-25', sessionId: 'up-crm' },
};

/** The deps over a catalog of `providers`, a vault where only u1 has connected crm, a client recording each DELETE (session id → headers sent) and a bus recording ended sessions. */
function closing(providers: ProviderRecord[] | 'failing') {
  const closed: Record<string, Record<string, string>> = {};
  const catalog = {
    providers: {
      get: async (id: string) =>
        providers === 'failing'
          ? Promise.reject(new Error('catalog down'))
          : (providers.find((p) => p.id === id) ?? null),
      authSecret: (p: ProviderRecord) => (p.authType === 'bearer' ? 'shared-secret' : null),
    },
  } as unknown as Catalog;
  const client = {
    close: async (target: UpstreamTarget, session: UpstreamSession) =>
      void (closed[session.sessionId!] = target.headers ?? {}),
  } as unknown as McpUpstreamClient;
  const resolver: CredentialResolver = {
    resolve: async ({ userId, serviceTypes }): Promise<CredentialResolution> =>
      userId === 'u1'
        ? { credentials: { crm: 'token-of-u1' }, missing: [], authUrls: {} }
        : { credentials: {}, missing: serviceTypes, authUrls: { crm: 'https://gw.test/connect' } },
  };
  const targets = new RequestTargets({
    catalog,
    userCredentials: new UserCredentials(() => resolver),
    exchange: () => ({}) as TokenExchange,
  });
  const asUser = (userId: string) => (provider: ProviderRecord) =>
    targets.forRequest(provider, {
      principal: { ...personOf(), userId, endUserId: userId },
      requestId: 'r1',
      headers: new Headers(),
      capabilities: {},
    });
  const ended: string[] = [];
  const bus = new MemoryEventBus();
  void bus.subscribe('mcp_session.ended', ({ sid }) => void ended.push(sid));
  return { closed, ended, deps: { catalog, client, bus }, asUser };
}

describe('closeUpstreams (a client session ends)', () => {
  it("ends a per-user provider's upstream session as the user, and a shared provider's with its own auth", async () => {
    const { closed, deps, asUser } = closing([shared, perUser]);
    await closeUpstreams(deps, upstreams, asUser('u1'));
    expect(closed['up-crm']).toMatchObject({ authorization: 'Bearer token-of-u1', 'x-user-id': 'u1' });
    expect(closed['up-shared']).toEqual({ authorization: 'Bearer shared-secret' });
  });

  it("leaves a per-user provider's upstream session to expire when the user has no connection or there is no user to end it as (another owner's evicted session)", async () => {
    for (const userId of ['u2', null]) {
      const { closed, deps, asUser } = closing([shared, perUser]);
      await closeUpstreams(deps, upstreams, userId === null ? null : asUser(userId));
      expect(Object.keys(closed)).toEqual(['up-shared']);
    }
  });

  it('closes nothing and does not throw when the catalog cannot be read', async () => {
    const { closed, deps, asUser } = closing('failing');
    await closeUpstreams(deps, upstreams, asUser('u1'));
    expect(closed).toEqual({});
  });
});

describe('dropEvicted (an initialize evicted sessions)', () => {
  /** A store holding one session of `owner` that opened both upstream sessions. */
  async function storeWith(limits: { maxPerOwner?: number; maxSessions?: number }, owner: string) {
    const store = new MemorySessionStore(new ManualClock(), limits);
    await store.create('old', owner);
    for (const [providerId, upstream] of Object.entries(upstreams))
      await store.setUpstream('old', providerId, upstream);
    return store;
  }

  it("ends the evicting caller's own evicted session's per-user upstream session as them (their per-owner cap)", async () => {
    const store = await storeWith({ maxPerOwner: 1 }, 'owner-u1');
    const { closed, ended, deps, asUser } = closing([shared, perUser]);
    await dropEvicted(deps, await store.create('new', 'owner-u1'), { owner: 'owner-u1', asUser: asUser('u1') });
    expect(ended).toEqual(['old']);
    expect(closed['up-crm']).toMatchObject({ authorization: 'Bearer token-of-u1', 'x-user-id': 'u1' });
    expect(closed['up-shared']).toEqual({ authorization: 'Bearer shared-secret' });
  });

  it("never ends another owner's per-user upstream session with the evicting caller's credentials (the in-process store's total cap)", async () => {
    const store = await storeWith({ maxSessions: 1 }, 'owner-u2');
    const { closed, ended, deps, asUser } = closing([shared, perUser]);
    await dropEvicted(deps, await store.create('new', 'owner-u1'), { owner: 'owner-u1', asUser: asUser('u1') });
    expect(ended).toEqual(['old']);
    expect(closed).toEqual({ 'up-shared': { authorization: 'Bearer shared-secret' } });
  });
});
