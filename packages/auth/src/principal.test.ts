import { describe, expect, expectTypeOf, it } from 'vitest';
import type { PrincipalVia } from '@agentgw/core';
import { permissionsOf } from './permissions.js';
import { actingUserOf, hasActingUser, isPersonSignedIn, type Principal, type UserJwtPrincipal } from './principal.js';

const standing = { email: null, roles: [], tenantId: 'acme', permissions: permissionsOf([]) };

const person: Principal = { via: 'jwt', ...standing, userId: 'alice', endUserId: 'alice', agentId: null, apiKey: null };
const keyForPerson: Principal = {
  via: 'api_key',
  ...standing,
  userId: 'alice',
  endUserId: 'alice',
  agentId: 'agent-1',
  apiKey: { id: 'key-1', scopes: [] },
};
const bareAgent: Principal = {
  via: 'runtime_token',
  ...standing,
  userId: null,
  endUserId: null,
  agentId: 'agent-1',
  apiKey: null,
};
const session: Principal = {
  via: 'session_token',
  ...standing,
  userId: 'alice',
  endUserId: 'alice',
  agentId: 'agent-1',
  apiKey: null,
};

// The checks below are made by `tsc` (the package's typecheck): each `@ts-expect-error` fails
// the typecheck should the line it marks ever compile, i.e. should the union admit that state.
describe('Principal (compile time)', () => {
  it('has one variant per credential form', () => {
    expectTypeOf<Principal['via']>().toEqualTypeOf<PrincipalVia>();
  });

  it('refuses states no credential form produces', () => {
    // @ts-expect-error a runtime token carries no user
    const runtimeWithUser: Principal = {
      via: 'runtime_token',
      ...standing,
      userId: 'alice',
      endUserId: null,
      agentId: 'agent-1',
      apiKey: null,
    };
    // @ts-expect-error a runtime token always names its agent
    const runtimeWithoutAgent: Principal = {
      via: 'runtime_token',
      ...standing,
      userId: null,
      endUserId: null,
      agentId: null,
      apiKey: null,
    };
    // @ts-expect-error a user JWT alone never acts as an agent
    const jwtWithAgent: Principal = {
      via: 'jwt',
      ...standing,
      userId: 'alice',
      endUserId: 'alice',
      agentId: 'agent-1',
      apiKey: null,
    };
    // @ts-expect-error an API-key principal carries its key
    const keyWithoutKey: Principal = {
      via: 'api_key',
      ...standing,
      userId: 'alice',
      endUserId: 'alice',
      agentId: null,
      apiKey: null,
    };
    // @ts-expect-error a session token always names its end user
    const sessionWithoutUser: Principal = {
      via: 'session_token',
      ...standing,
      userId: null,
      endUserId: null,
      agentId: 'agent-1',
      apiKey: null,
    };
    expect([runtimeWithUser, runtimeWithoutAgent, jwtWithAgent, keyWithoutKey, sessionWithoutUser]).toHaveLength(5);
  });

  it('narrows on via and on the helpers', () => {
    expectTypeOf<Extract<Principal, { via: 'runtime_token' }>['userId']>().toEqualTypeOf<null>();
    expectTypeOf<Extract<Principal, { via: 'session_token' }>['agentId']>().toEqualTypeOf<string>();
    const any = person as Principal;
    if (hasActingUser(any)) expectTypeOf(any.userId).toEqualTypeOf<string>();
    if (isPersonSignedIn(any)) expectTypeOf(any).toEqualTypeOf<UserJwtPrincipal>();
  });
});

describe('acting user', () => {
  it('is the user of every form but a bare runtime token', () => {
    expect([person, keyForPerson, session, bareAgent].map(actingUserOf)).toEqual(['alice', 'alice', 'alice', null]);
    expect([person, keyForPerson, session, bareAgent].map(hasActingUser)).toEqual([true, true, true, false]);
  });

  it('is a person signed in only with their own JWT', () => {
    expect([person, keyForPerson, session, bareAgent].map(isPersonSignedIn)).toEqual([true, false, false, false]);
  });
});
