import type { CredentialResolver, TokenExchange } from '@agentgw/credentials';
import { describe, expect, it } from 'vitest';
import { bareAgentOf, personOf, providerOf } from '../tool-call/tool-call.fixtures.js';
import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import type { UpstreamTarget } from '@agentgw/mcp-client';
import { callerAuthOf, type CallerAuthDeps } from '../upstream-auth/caller-auth.js';
import { UserCredentials } from '../upstream-auth/user-credentials.js';
import { listAuthOf, listingUserOf, listsPerUser } from './caller-providers.js';

const AUTH_URL = 'https://gw.test/api/v1/credentials/oauth/crm/auth';
const base = { endpoint: 'http://crm.test/mcp', key: 'p|http://crm.test/mcp|user_oauth|', headers: {} };

/** The same vault table fake the call's own auth is tested with: (user → service type → value). */
const credentialsOf = (values: Record<string, Record<string, string>>) =>
  new UserCredentials((): CredentialResolver => ({
    resolve: async ({ userId, serviceTypes }) => {
      const mine = values[userId] ?? {};
      const missing = serviceTypes.filter((t) => !(t in mine));
      return {
        credentials: Object.fromEntries(serviceTypes.filter((t) => t in mine).map((t) => [t, mine[t]!])),
        missing,
        authUrls: Object.fromEntries(missing.map((t) => [t, AUTH_URL])),
      };
    },
  }));

const deps = (values: Record<string, Record<string, string>>) => ({
  userCredentials: credentialsOf(values),
  exchange: (): TokenExchange => {
    throw new Error('no exchange here');
  },
  clientSecret: () => null,
});
const user = (userId: string) => ({ ...personOf(), userId, endUserId: userId });
const perUser = (authType: 'user_oauth' | 'user_key' | 'bearer') => ({
  ...providerOf('crm', '*'),
  authType,
  credentialServiceType: 'crm',
});
const noHeaders = new Headers();

/** The auth a per-user provider's list is asked with: the caller's auth (`callerAuthOf`) as a list target. */
const userListAuth = async (
  deps: CallerAuthDeps,
  provider: ProviderRecord,
  principal: Principal,
  headers: Pick<Headers, 'get'>,
  target: UpstreamTarget,
) =>
  listAuthOf(await callerAuthOf(deps, provider, principal, headers), target, listingUserOf(provider, principal) ?? '');

describe('listAuthOf (the auth a per-user provider is listed with)', () => {
  it('lists only per-user providers per user', () => {
    expect(listsPerUser(perUser('user_oauth'))).toBe(true);
    expect(listsPerUser({ ...providerOf('x', '*'), authType: 'token_exchange' })).toBe(true);
    expect(listsPerUser(perUser('bearer'))).toBe(false);
    expect(listingUserOf(perUser('user_oauth'), user('u1'))).toBe('u1');
    expect(listingUserOf(perUser('user_oauth'), bareAgentOf())).toBeNull();
  });

  it("carries the headers the user's call carries, on an upstream session of that user's alone", async () => {
    const values = { u1: { crm: 'token-of-u1' }, u2: { crm: 'token-of-u2' } };
    const one = await userListAuth(deps(values), perUser('user_oauth'), user('u1'), noHeaders, base);
    const two = await userListAuth(deps(values), perUser('user_oauth'), user('u2'), noHeaders, base);
    expect(one).toMatchObject({
      kind: 'target',
      target: { endpoint: base.endpoint, key: base.key, headers: { authorization: 'Bearer token-of-u1' } },
    });
    expect(two).toMatchObject({ kind: 'target', target: { headers: { authorization: 'Bearer token-of-u2' } } });
    if (one.kind !== 'target' || two.kind !== 'target') throw new Error('unreachable');
    expect(one.target.principal).not.toBe(two.target.principal);
    expect(await userListAuth(deps(values), perUser('user_key'), user('u1'), noHeaders, base)).toMatchObject({
      target: { headers: { 'x-api-key': 'token-of-u1' } },
    });
  });

  it('names the connect URL for a user who has not connected, and none for a caller acting for no user', async () => {
    expect(await userListAuth(deps({}), perUser('user_oauth'), user('u3'), noHeaders, base)).toEqual({
      kind: 'needs_auth',
      reason: expect.stringContaining('Connect crm first'),
      authUrl: AUTH_URL,
    });
    expect(await userListAuth(deps({}), perUser('user_oauth'), bareAgentOf(), noHeaders, base)).toMatchObject({
      kind: 'needs_auth',
      authUrl: null,
    });
  });

  it('refuses a token_exchange listing without a sign-in token to exchange, before any exchange', async () => {
    const provider = {
      ...providerOf('x', '*'),
      authType: 'token_exchange' as const,
      tokenExchange: {
        server: { kind: 'token_url' as const, tokenUrl: 'https://as.test/token' },
        clientId: 'c',
        audience: null,
        resource: null,
        scope: null,
      },
    };
    expect(await userListAuth(deps({}), provider, bareAgentOf(), noHeaders, base)).toMatchObject({
      kind: 'needs_auth',
      authUrl: null,
      reason: expect.stringContaining('sign-in token'),
    });
  });
});
