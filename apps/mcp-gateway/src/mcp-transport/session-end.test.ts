import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import type { CredentialResolution, CredentialResolver, TokenExchange } from '@agentgw/credentials';
import type { McpUpstreamClient, UpstreamSession, UpstreamTarget } from '@agentgw/mcp-client';
import { describe, expect, it } from 'vitest';
import { personOf, providerOf } from '../tool-call/tool-call.fixtures.js';
import { RequestTargets } from '../upstream-auth/request-targets.js';
import { UserCredentials } from '../upstream-auth/user-credentials.js';
import { closeUpstreams } from './session-end.js';

const shared: ProviderRecord = { ...providerOf('shared', '*'), authType: 'bearer' };
const perUser: ProviderRecord = { ...providerOf('crm', '*'), authType: 'user_oauth', credentialServiceType: 'crm' };
const upstreams: Record<string, UpstreamSession> = {
  shared: { protocolVersion: '2025-11-25', sessionId: 'up-shared' },
  crm: { protocolVersion: '2025-11-25', sessionId: 'up-crm' },
};

/** The deps over a catalog of `providers`, a vault where only u1 has connected crm, and a client recording each DELETE (session id → headers sent). */
function closing(providers: ProviderRecord[] | 'failing') {
  const closed: Record<string, Record<string, string>> = {};
  const catalog = {
    providers: {
      get: async (id: string) => (providers === 'failing' ? Promise.reject(new Error('catalog down')) : (providers.find((p) => p.id === id) ?? null)),
      authSecret: (p: ProviderRecord) => (p.authType === 'bearer' ? 'shared-secret' : null),
    },
  } as unknown as Catalog;
  const client = { close: async (target: UpstreamTarget, session: UpstreamSession) => void (closed[session.sessionId!] = target.headers ?? {}) } as unknown as McpUpstreamClient;
  const resolver: CredentialResolver = {
    resolve: async ({ userId, serviceTypes }): Promise<CredentialResolution> =>
      userId === 'u1' ? { credentials: { crm: 'token-of-u1' }, missing: [], authUrls: {} } : { credentials: {}, missing: serviceTypes, authUrls: { crm: 'https://gw.test/connect' } },
  };
  const targets = new RequestTargets({ catalog, userCredentials: new UserCredentials(() => resolver), exchange: () => ({}) as TokenExchange });
  const asUser = (userId: string) => (provider: ProviderRecord) =>
    targets.forRequest(provider, { principal: { ...personOf(), userId, endUserId: userId }, requestId: 'r1', headers: new Headers(), capabilities: {} });
  return { closed, deps: { catalog, client }, asUser };
}

describe('closeUpstreams (a client session ends)', () => {
  it("ends a per-user provider's upstream session as the user, and a shared provider's with its own auth", async () => {
    const { closed, deps, asUser } = closing([shared, perUser]);
    await closeUpstreams(deps, upstreams, asUser('u1'));
    expect(closed['up-crm']).toMatchObject({ authorization: 'Bearer token-of-u1', 'x-user-id': 'u1' });
    expect(closed['up-shared']).toEqual({ authorization: 'Bearer shared-secret' });
  });

  it("leaves a per-user provider's upstream session to expire when the user has no connection or none is known (an evicted session)", async () => {
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
