import { describe, expect, it } from 'vitest';
import { systemClock } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { CredentialForms, bearerToken } from './credential-forms.js';
import type { AgentIdentities, AgentIdentity, UserIdentity } from './identity-cache.js';
import type { SessionClaims } from './session-token.js';
import { generateRuntimeToken } from './tokens.js';

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (err: { status?: number; code?: string }) => `${err.status} ${err.code}`,
  );

const alice: UserIdentity = {
  id: 'u-alice',
  email: 'alice@a.io',
  roles: ['agent_creator'],
  tenantId: 'A',
  passwordStamp: 0,
};

/** An agents reader over a map the test changes, as an `agent.changed` reload would; `reads` lists its lookups. */
function readerOf(agents: Map<string, AgentIdentity>): { reader: AgentIdentities; reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    reader: {
      get: async (id) => {
        reads.push(`id:${id}`);
        return agents.get(id) ?? null;
      },
      byTokenHash: async (hash) => {
        reads.push('hash');
        return [...agents.values()].find((a) => a.runtimeTokenHash === hash) ?? null;
      },
    },
  };
}

const refused = () => Object.assign(new Error('bad token'), { status: 401, code: 'INVALID_TOKEN' });

/** Credential forms over in-memory parts: the users in `users` (alice, JWT `alice-jwt`) and agent-a's session token for alice. */
function formsWith(
  agents: AgentIdentities,
  users: Map<string, UserIdentity> = new Map([[alice.id, alice]]),
): CredentialForms {
  return new CredentialForms({
    db: {} as Kysely<Database>,
    clock: systemClock,
    identities: { userById: async (id) => users.get(id) ?? null, apiKeyByHash: async () => null },
    agents,
    external: { userFromToken: async (token) => (token === 'alice-jwt' ? alice : Promise.reject(refused())) },
    sessions: {
      verifySessionToken: async (token, presenter): Promise<SessionClaims> => {
        if (token !== 'session-of-agent-a' || presenter.agentId !== 'agent-a') throw refused();
        return {
          endUserId: alice.id,
          email: alice.email,
          roles: ['agent_creator'],
          tenantId: 'A',
          agentId: 'agent-a',
          requestId: 'r1',
        };
      },
    },
  });
}

describe('credential forms', () => {
  const token = generateRuntimeToken();
  const agentA = (isActive: boolean): AgentIdentity => ({
    id: 'agent-a',
    tenantId: 'A',
    isActive,
    runtimeTokenHash: token.hash,
  });

  it('reads the agent of every form through the agents reader, and its isActive is the one kill-switch check', async () => {
    const agents = new Map([['agent-a', agentA(true)]]);
    const { reader, reads } = readerOf(agents);
    const forms = formsWith(reader);
    const runtime = new Headers({ authorization: `Bearer ${token.token}` });
    const session = new Headers({ 'x-gateway-session-token': 'session-of-agent-a', 'x-agent-id': 'agent-a' });
    expect(await forms.authenticate(runtime, 'flexible')).toMatchObject({
      via: 'runtime_token',
      agentId: 'agent-a',
      tenantId: 'A',
    });
    expect(await forms.authenticate(session, 'flexible')).toMatchObject({
      via: 'session_token',
      agentId: 'agent-a',
      userId: alice.id,
    });
    expect(reads).toEqual(['hash', 'id:agent-a']);

    agents.set('agent-a', agentA(false));
    expect(await rejection(forms.authenticate(runtime, 'flexible'))).toBe('403 AGENT_DISABLED');
    expect(await rejection(forms.authenticate(session, 'flexible'))).toBe('403 AGENT_DISABLED');
  });

  // A session token used to stand for its end user after that user was deleted (auth never looked them up).
  it("refuses a session token whose end user was deleted (401 TOKEN_REVOKED), as the next call or a held call's re-check sees it", async () => {
    const users = new Map([[alice.id, alice]]);
    const forms = formsWith(readerOf(new Map([['agent-a', agentA(true)]])).reader, users);
    const session = new Headers({ 'x-gateway-session-token': 'session-of-agent-a', 'x-agent-id': 'agent-a' });
    expect(await forms.authenticate(session, 'flexible')).toMatchObject({ via: 'session_token', endUserId: alice.id });
    users.delete(alice.id);
    expect(await rejection(forms.authenticate(session, 'flexible'))).toBe('401 TOKEN_REVOKED');
  });

  it('refuses a runtime token whose hash the reader maps to an agent holding another one (a rotated token)', async () => {
    const rotated = generateRuntimeToken();
    const forms = formsWith({
      get: async () => agentA(true),
      byTokenHash: async () => ({ ...agentA(true), runtimeTokenHash: rotated.hash }),
    });
    expect(
      await rejection(forms.authenticate(new Headers({ authorization: `Bearer ${token.token}` }), 'flexible')),
    ).toBe('401 INVALID_TOKEN');
  });

  it('lends an agent only with its own credentials: a user JWT with X-Agent-Id is 403, a bad JWT stays 401', async () => {
    const { reader, reads } = readerOf(new Map([['agent-a', agentA(true)]]));
    const forms = formsWith(reader);
    expect(
      await rejection(
        forms.authenticate(new Headers({ authorization: 'Bearer alice-jwt', 'x-agent-id': 'agent-a' }), 'flexible'),
      ),
    ).toBe('403 AGENT_ID_NOT_ALLOWED');
    expect(
      await rejection(
        forms.authenticate(new Headers({ authorization: 'Bearer forged', 'x-agent-id': 'agent-a' }), 'flexible'),
      ),
    ).toBe('401 INVALID_TOKEN');
    expect(reads).toEqual([]);
  });

  it('jwt mode takes a user JWT only; anything but a Bearer scheme is a 401', async () => {
    const forms = formsWith(readerOf(new Map([['agent-a', agentA(true)]])).reader);
    expect(await forms.authenticate(new Headers({ authorization: 'Bearer alice-jwt' }), 'jwt')).toMatchObject({
      via: 'jwt',
      userId: alice.id,
      endUserId: alice.id,
    });
    expect(await rejection(forms.authenticate(new Headers({ authorization: `Bearer ${token.token}` }), 'jwt'))).toBe(
      '401 UNAUTHORIZED',
    );
    expect(await rejection(forms.authenticate(new Headers(), 'flexible'))).toBe('401 UNAUTHORIZED');
    expect(() => bearerToken('Basic abc')).toThrow(expect.objectContaining({ status: 401 }));
    expect(bearerToken(null)).toBeNull();
  });
});
