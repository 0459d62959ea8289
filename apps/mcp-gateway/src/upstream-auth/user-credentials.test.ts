import type { CredentialResolver } from '@agentgw/credentials';
import { describe, expect, it } from 'vitest';
import { bareAgentOf, personOf, principalOf, providerOf } from '../tool-call/tool-call.fixtures.js';
import { UserCredentials } from './user-credentials.js';

const AUTH_URL = 'https://gw.test/api/v1/credentials/oauth/crm/auth';

/** A vault answering from a fixed table of (user → service type → value), recording who asked. */
function vaultOf(values: Record<string, Record<string, string>>) {
  const asked: string[] = [];
  const resolver: CredentialResolver = {
    resolve: async ({ userId, serviceTypes }) => {
      asked.push(userId);
      const mine = values[userId] ?? {};
      const credentials = Object.fromEntries(serviceTypes.filter((t) => t in mine).map((t) => [t, mine[t]!]));
      const missing = serviceTypes.filter((t) => !(t in mine));
      return { credentials, missing, authUrls: Object.fromEntries(missing.map((t) => [t, AUTH_URL])) };
    },
  };
  return { asked, credentials: new UserCredentials(() => resolver) };
}

const userPrincipal = (userId: string) => ({ ...personOf(), userId, endUserId: userId });
const perUser = (authType: 'user_oauth' | 'user_key') => ({
  ...providerOf('crm', '*'),
  authType,
  credentialServiceType: 'crm',
});

describe('UserCredentials', () => {
  it("sends the user's OAuth token as a bearer token and a key as X-Api-Key", async () => {
    const { credentials } = vaultOf({ u1: { crm: 'token-of-u1' } });
    expect(await credentials.forCall(perUser('user_oauth'), userPrincipal('u1'))).toEqual({
      kind: 'headers',
      headers: { authorization: 'Bearer token-of-u1' },
    });
    expect(await credentials.forCall(perUser('user_key'), userPrincipal('u1'))).toEqual({
      kind: 'headers',
      headers: { 'x-api-key': 'token-of-u1' },
    });
  });

  it('asks nothing for providers with their own or no auth', async () => {
    const { credentials, asked } = vaultOf({});
    expect(await credentials.forCall({ ...providerOf('p', '*'), authType: 'bearer' }, userPrincipal('u1'))).toEqual({
      kind: 'none',
    });
    expect(asked).toEqual([]);
  });

  it('answers the connect URL for a user who has not connected, and refuses a caller acting for no user', async () => {
    const { credentials, asked } = vaultOf({});
    expect(await credentials.forCall(perUser('user_oauth'), userPrincipal('u2'))).toEqual({
      kind: 'missing',
      serviceType: 'crm',
      authUrl: AUTH_URL,
    });
    expect(await credentials.forCall(perUser('user_oauth'), bareAgentOf())).toEqual({
      kind: 'no_user',
      serviceType: 'crm',
    });
    expect(asked).toEqual(['u2']);
  });

  it("acts for the end user a session token speaks for, not the agent's caller", async () => {
    const { credentials, asked } = vaultOf({ e1: { crm: 'token-of-e1' } });
    expect(await credentials.forCall(perUser('user_oauth'), principalOf())).toEqual({
      kind: 'headers',
      headers: { authorization: 'Bearer token-of-e1' },
    });
    expect(asked).toEqual(['e1']);
  });

  it('never sends a stored value that is no valid header value (CR/LF)', async () => {
    const { credentials } = vaultOf({ u3: { crm: 'evil\r\nx-admin: yes' } });
    expect(await credentials.forCall(perUser('user_oauth'), userPrincipal('u3'))).toMatchObject({ kind: 'missing' });
  });
});
