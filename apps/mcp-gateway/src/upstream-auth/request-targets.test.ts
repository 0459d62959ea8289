import type { Catalog, ProviderRecord } from '@agentgw/catalog';
import type { CredentialResolver, ExchangeCaller, TokenExchange } from '@agentgw/credentials';
import { describe, expect, it } from 'vitest';
import { RpcError } from '../rpc-errors.js';
import { bareAgentOf, personOf, providerOf } from '../tool-call/tool-call.fixtures.js';
import { carriesUserAuth, RequestTargets, type TargetRequest } from './request-targets.js';
import { URL_ELICITATION_REQUIRED } from './user-auth-refusal.js';
import { UserCredentials } from './user-credentials.js';

const AUTH_URL = 'https://gw.test/api/v1/credentials/oauth/crm/auth';

/** RequestTargets over a vault table (user → service type → value) and an exchange answering `exchanged-for-<user>`, recording what was asked. */
function targetsOf(values: Record<string, Record<string, string>>) {
  const asked: string[] = [];
  const resolver: CredentialResolver = {
    resolve: async ({ userId, serviceTypes }) => {
      asked.push(`vault:${userId}`);
      const mine = values[userId] ?? {};
      const missing = serviceTypes.filter((t) => !(t in mine));
      return {
        credentials: Object.fromEntries(serviceTypes.filter((t) => t in mine).map((t) => [t, mine[t]!])),
        missing,
        authUrls: Object.fromEntries(missing.map((t) => [t, AUTH_URL])),
      };
    },
  };
  const exchange = {
    accessTokenFor: async (_p: string, { userId }: ExchangeCaller) => (
      asked.push(`exchange:${userId}`),
      `exchanged-for-${userId}`
    ),
  } as unknown as TokenExchange;
  const catalog = {
    providers: { authSecret: (p: ProviderRecord) => (p.authType === 'bearer' ? 'shared-secret' : null) },
  } as unknown as Catalog;
  return {
    asked,
    targets: new RequestTargets({
      catalog,
      userCredentials: new UserCredentials(() => resolver),
      exchange: () => exchange,
    }),
  };
}

const user = (userId: string) => ({ ...personOf(), userId, endUserId: userId });
const requestOf = (principal: TargetRequest['principal'], over: Partial<TargetRequest> = {}): TargetRequest => ({
  principal,
  requestId: 'r1',
  headers: new Headers(),
  capabilities: {},
  ...over,
});
const perUser = (authType: ProviderRecord['authType']): ProviderRecord => ({
  ...providerOf('crm', '*'),
  authType,
  credentialServiceType: 'crm',
});
const exchanging: ProviderRecord = {
  ...providerOf('x', '*'),
  authType: 'token_exchange',
  tokenExchange: {
    server: { kind: 'token_url', tokenUrl: 'https://as.test/token' },
    clientId: 'c',
    audience: null,
    resource: null,
    scope: null,
  },
};

/** The refusal `forRequest` throws, as its JSON-RPC error. */
async function refusalOf(promise: Promise<unknown>) {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RpcError);
  return (err as RpcError).toObject();
}

describe('RequestTargets (the one target of a forwarded request)', () => {
  it("gives a shared-auth provider its own auth and the caller's identity, with no lookup", async () => {
    const { targets, asked } = targetsOf({});
    const target = await targets.forRequest(
      { ...perUser('bearer'), credentialServiceType: null },
      requestOf(user('u1')),
    );
    expect(target.headers).toMatchObject({
      authorization: 'Bearer shared-secret',
      'x-user-id': 'u1',
      'x-gateway-request-id': 'r1',
    });
    expect(asked).toEqual([]);
  });

  it("adds the caller's own token or key for a per-user provider, on an upstream session of that principal alone", async () => {
    const { targets } = targetsOf({ u1: { crm: 'token-of-u1' }, u2: { crm: 'token-of-u2' } });
    const one = await targets.forRequest(perUser('user_oauth'), requestOf(user('u1')));
    const two = await targets.forRequest(perUser('user_oauth'), requestOf(user('u2')));
    expect(one.headers?.authorization).toBe('Bearer token-of-u1');
    expect(two.headers?.authorization).toBe('Bearer token-of-u2');
    expect(one.principal).not.toBe(two.principal);
    expect((await targets.forRequest(perUser('user_key'), requestOf(user('u1')))).headers?.['x-api-key']).toBe(
      'token-of-u1',
    );
    expect((await targets.forRequest(perUser('mcp_oauth'), requestOf(user('u2')))).headers?.authorization).toBe(
      'Bearer token-of-u2',
    );
  });

  it("refuses a user who has not connected with the call's CREDENTIALS_REQUIRED and connect URL (URL-mode elicitation when declared), unaudited", async () => {
    const { targets } = targetsOf({});
    const plain = await refusalOf(targets.forRequest(perUser('user_oauth'), requestOf(user('u3'))));
    expect(plain).toMatchObject({
      code: -32003,
      data: { code: 'CREDENTIALS_REQUIRED', missing: ['crm'], authUrl: AUTH_URL, providerId: 'crm' },
    });
    expect(plain.data).not.toHaveProperty('auditId');
    const elicited = await refusalOf(
      targets.forRequest(perUser('user_oauth'), requestOf(user('u3'), { capabilities: { elicitation: { url: {} } } })),
    );
    expect(elicited).toMatchObject({
      code: URL_ELICITATION_REQUIRED,
      data: { elicitations: [{ mode: 'url', url: AUTH_URL }], code: 'CREDENTIALS_REQUIRED' },
    });
  });

  it('refuses a caller acting for no user, and a per-user provider that names no credential service type', async () => {
    const { targets, asked } = targetsOf({});
    expect(await refusalOf(targets.forRequest(perUser('user_oauth'), requestOf(bareAgentOf())))).toMatchObject({
      code: -32003,
      data: { code: 'USER_REQUIRED' },
    });
    expect(
      await refusalOf(
        targets.forRequest({ ...perUser('user_oauth'), credentialServiceType: null }, requestOf(user('u1'))),
      ),
    ).toMatchObject({
      code: -32003,
      data: { code: 'USER_AUTH_UNAVAILABLE' },
    });
    expect(asked).toEqual([]);
  });

  it("exchanges the caller's sign-in token for a token_exchange provider; without one it is refused before any exchange", async () => {
    const { targets, asked } = targetsOf({});
    const signedIn = requestOf(user('u1'), { headers: new Headers({ authorization: 'Bearer user-jwt' }) });
    expect((await targets.forRequest(exchanging, signedIn)).headers?.authorization).toBe('Bearer exchanged-for-u1');
    expect(await refusalOf(targets.forRequest(exchanging, requestOf(bareAgentOf())))).toMatchObject({
      code: -32003,
      data: { code: 'SIGN_IN_TOKEN_REQUIRED' },
    });
    expect(asked).toEqual(['exchange:u1']);
  });

  it("tells a call's headers that carry a user's auth from those that do not", () => {
    expect(carriesUserAuth({ authorization: 'Bearer t' })).toBe(true);
    expect(carriesUserAuth({ 'x-api-key': 'k' })).toBe(true);
    expect(carriesUserAuth({ 'mcp-param-region': 'eu' })).toBe(false);
    expect(carriesUserAuth(null)).toBe(false);
  });
});
